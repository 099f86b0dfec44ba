import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { parseWebhooksConfig } from '../src/config.ts';
import { eventForIntegrator } from '../src/domain/announcements.ts';
import { insideAllowed, ipBytes, parseCidr, parseCidrList, refusedAddress, refusedDestination } from '../src/domain/destination.ts';
import { messageId, newMessage } from '../src/domain/messages.ts';
import { EndpointClient } from '../src/handlers/endpointClient.ts';
import { nextDueAfter, pickDue, type QueueRow } from '../src/store/deliveryStore.ts';
import { attemptOutcome, JITTER, nextAttemptDelay, parseDuration, parseRetrySchedule } from '../src/domain/retrySchedule.ts';
import { newSecret, secretKey, signedHeaders } from '../src/domain/signing.ts';

const KEK = 'dev:ZWZzLWxvY2FsLWRldmVsb3BtZW50LW9ubHkta2V5ISE=';

describe('destinations (SSRF)', () => {
  it('reads IPv4, IPv6, embedded IPv4 and zones into bytes', () => {
    expect([...ipBytes('10.1.2.3')!]).toEqual([10, 1, 2, 3]);
    expect([...ipBytes('::1')!]).toEqual([...Array(15).fill(0), 1]);
    expect([...ipBytes('::ffff:127.0.0.1')!].slice(10)).toEqual([0xff, 0xff, 127, 0, 0, 1]);
    expect([...ipBytes('[fe80::1%eth0]')!].slice(0, 2)).toEqual([0xfe, 0x80]);
    expect(ipBytes('example.com')).toBeNull();
    expect(ipBytes('1.2.3')).toBeNull();
  });

  it('refuses loopback, private, link-local, metadata, CGNAT, multicast and reserved addresses, IPv4-mapped and NAT64 forms too', () => {
    const refused = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.255',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '::',
      '::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      '::10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2001:db8::1',
    ];
    for (const a of refused) expect(refusedAddress(a, []), a).not.toBeNull();
    expect(refusedAddress('169.254.169.254', [])).toMatch(/metadata/);
    for (const a of ['93.184.216.34', '8.8.8.8', '100.63.255.255', '100.128.0.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) expect(refusedAddress(a, []), a).toBeNull();
  });

  it('lets WEBHOOK_ALLOWED_CIDRS open a block, mapped forms included, and nothing beside it', () => {
    const allowed = parseCidrList('127.0.0.0/8, 10.1.0.0/16');
    expect(refusedAddress('127.0.0.1', allowed)).toBeNull();
    expect(refusedAddress('::ffff:127.0.0.1', allowed)).toBeNull();
    expect(refusedAddress('10.1.200.3', allowed)).toBeNull();
    expect(refusedAddress('10.2.0.1', allowed)).not.toBeNull();
    expect(refusedAddress('::1', allowed)).not.toBeNull();
    expect(refusedAddress('169.254.169.254', allowed)).not.toBeNull();
    expect(insideAllowed('127.0.0.1', allowed)).toBe(true);
    expect(insideAllowed('8.8.8.8', allowed)).toBe(false);
  });

  it('parses CIDR blocks and refuses malformed ones', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ bits: 8 });
    expect(parseCidr('fd00::/8')).toMatchObject({ bits: 8 });
    expect(parseCidr('1.2.3.4').bits).toBe(32);
    for (const bad of ['10.0.0.0/33', '::/129', 'example.com/8', '10.0.0.0/x', '']) expect(() => parseCidr(bad), bad).toThrow();
  });

  it('takes https anywhere public, http only where allowed, never other schemes, credentials or a name resolving partly inside a refused block', () => {
    const rules = { allowed: parseCidrList('127.0.0.0/8'), allowHttp: false };
    expect(refusedDestination(new URL('https://hooks.example.com/x'), ['93.184.216.34'], rules)).toBeNull();
    expect(refusedDestination(new URL('http://hooks.example.com/x'), ['93.184.216.34'], rules)).toMatch(/https is required/);
    expect(refusedDestination(new URL('http://hooks.example.com/x'), ['93.184.216.34'], { ...rules, allowHttp: true })).toBeNull();
    expect(refusedDestination(new URL('http://127.0.0.1:9/x'), ['127.0.0.1'], rules)).toBeNull();
    expect(refusedDestination(new URL('https://rebind.example.com/x'), ['93.184.216.34', '10.0.0.1'], rules)).toBe('the destination resolves to a refused address (private)');
    expect(refusedDestination(new URL('https://10.0.0.1/x'), ['10.0.0.1'], rules)).toMatch(/10\.0\.0\.1 is in 10\.0\.0\.0\/8 \(private\)/);
    expect(refusedDestination(new URL('ftp://hooks.example.com/x'), ['93.184.216.34'], rules)).toMatch(/http\(s\)/);
    expect(refusedDestination(new URL('https://u:p@hooks.example.com/x'), ['93.184.216.34'], rules)).toMatch(/credentials/);
    expect(refusedDestination(new URL('https://nowhere.example/x'), [], rules)).toMatch(/does not resolve/);
  });

  it("judges every URL on its own: one URL's refusal, cached by host, never refuses another URL of that host", async () => {
    const client = new EndpointClient({ rules: { allowed: [], allowHttp: false }, timeoutMs: 5000, maxSocketsPerEndpoint: 1 });
    try {
      expect(await client.resolve(new URL('http://93.184.216.34/hook'))).toEqual({ refused: 'https is required' });
      expect(await client.resolve(new URL('https://u:p@93.184.216.34/hook'))).toMatchObject({ refused: expect.stringMatching(/credentials/) });
      expect(await client.resolve(new URL('https://93.184.216.34/hook'))).toEqual({ address: '93.184.216.34', family: 4 });
    } finally {
      client.close();
    }
  });
});

describe('endpoint connection pools', () => {
  it("closes an endpoint's pool once it has gone unused for five minutes with no connection left, keeping the others", async () => {
    const server = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const client = new EndpointClient({ rules: { allowed: parseCidrList('127.0.0.0/8'), allowHttp: false }, timeoutMs: 500, maxSocketsPerEndpoint: 2 });
    try {
      vi.useFakeTimers({ toFake: ['Date'] });
      expect((await client.send('deleted-subscription', url, {}, '{}')).responseStatus).toBe(204);
      expect((await client.send('live-subscription', url, {}, '{}')).responseStatus).toBe(204);
      expect(client.pools).toBe(2);
      // The idle keep-alive connections close after the attempt timeout (real time).
      await new Promise((resolve) => setTimeout(resolve, 800));
      vi.setSystemTime(Date.now() + 4 * 60_000);
      expect((await client.send('live-subscription', url, {}, '{}')).responseStatus).toBe(204);
      vi.setSystemTime(Date.now() + 2 * 60_000);
      expect((await client.send('live-subscription', url, {}, '{}')).responseStatus).toBe(204);
      expect(client.pools).toBe(1);
    } finally {
      vi.useRealTimers();
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('retry schedule', () => {
  it('parses durations and the schedule, refusing what is not one', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('3d')).toBe(259_200_000);
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h,10h,10h')).toEqual([5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000]);
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h,10h,10h').reduce((a, b) => a + b, 0) / 3_600_000).toBeCloseTo(47.6, 1);
    for (const bad of ['', '5', '5x', '-5s', '0s', '5s,,x', '1.5s']) expect(() => parseRetrySchedule(bad), bad).toThrow();
  });

  it('jitters each wait by at most ±20 % and gives up when the schedule is exhausted', () => {
    const schedule = [1000, 60_000];
    expect(nextAttemptDelay(schedule, 1, 0)).toBe(1000 * (1 - JITTER));
    expect(nextAttemptDelay(schedule, 1, 0.999999)).toBeCloseTo(1000 * (1 + JITTER), -1);
    expect(nextAttemptDelay(schedule, 2, 0.5)).toBe(60_000);
    expect(nextAttemptDelay(schedule, 3, 0.5)).toBeNull();
  });

  it('counts any 2xx a success, retries anything else, and marks a 410 for disabling', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    expect(attemptOutcome(204, 0, [1000], now)).toEqual({ succeeded: true, status: 'succeeded', nextAttemptAt: null, gone: false });
    expect(attemptOutcome(500, 0, [1000], now, 0.5)).toEqual({ succeeded: false, status: 'pending', nextAttemptAt: new Date(now.getTime() + 1000), gone: false });
    expect(attemptOutcome(null, 1, [1000], now)).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(attemptOutcome(301, 0, [1000], now)).toMatchObject({ succeeded: false, status: 'pending' });
    expect(attemptOutcome(410, 0, [1000], now)).toMatchObject({ succeeded: false, gone: true });
  });

  it('is read from the environment, a bad value stopping the process with the variable named', () => {
    const c = parseWebhooksConfig({ SIGNING_KEY_ENCRYPTION_KEY: KEK });
    expect(c.WEBHOOK_RETRY_SCHEDULE).toHaveLength(9);
    expect(c.WEBHOOK_DISABLE_AFTER).toBe(72 * 3_600_000);
    expect(c.WEBHOOK_ALLOWED_CIDRS).toEqual([]);
    expect(parseWebhooksConfig({ SIGNING_KEY_ENCRYPTION_KEY: KEK, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' }).WEBHOOK_ALLOWED_CIDRS[0]!.bits).toBe(8);
    expect(() => parseWebhooksConfig({ SIGNING_KEY_ENCRYPTION_KEY: KEK, WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration/);
    expect(() => parseWebhooksConfig({ SIGNING_KEY_ENCRYPTION_KEY: KEK, WEBHOOK_DISABLE_AFTER: '3 days' })).toThrow(/WEBHOOK_DISABLE_AFTER/);
    expect(() => parseWebhooksConfig({ SIGNING_KEY_ENCRYPTION_KEY: KEK, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/40' })).toThrow(/WEBHOOK_ALLOWED_CIDRS/);
    expect(() => parseWebhooksConfig({})).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: required/);
  });
});

describe('the queue', () => {
  const now = Date.parse('2026-12-01T00:00:00Z');
  const row = (id: string, sub: string, resource: string, over: Partial<QueueRow> = {}): QueueRow => ({ id, subscription_id: sub, resource_key: resource, status: 'pending', next_attempt_at: new Date(now - 1), lease_until: null, ...over });

  it('sends a message only when no earlier one about the same resource is open for that endpoint', () => {
    const rows = [row('a1', 'A', 'command:1', { next_attempt_at: new Date(now + 60_000) }), row('a2', 'A', 'command:1'), row('a3', 'A', 'command:2'), row('b1', 'B', 'command:1')];
    expect(pickDue(rows, now, 10, 10)).toEqual(['a3', 'b1']);
    expect(pickDue([row('a1', 'A', 'command:1', { status: 'sending', lease_until: new Date(now + 1000) }), row('a2', 'A', 'command:1')], now, 10, 10)).toEqual([]);
  });

  it('takes back a delivery whose lease ran out, and bounds what one endpoint and the whole claim take', () => {
    expect(pickDue([row('a1', 'A', 'r1', { status: 'sending', lease_until: new Date(now - 1) })], now, 10, 10)).toEqual(['a1']);
    const many = [...Array.from({ length: 5 }, (_, i) => row(`a${i}`, 'A', `r${i}`)), row('b0', 'B', 'r0')];
    expect(pickDue(many, now, 2, 10)).toEqual(['a0', 'a1', 'b0']);
    expect(pickDue(many, now, 10, 3)).toEqual(['a0', 'a1', 'a2']);
  });

  it('knows when the first head not due now becomes due: a retry at its time, a lease just after it runs out', () => {
    expect(nextDueAfter([row('a1', 'A', 'r1')], now)).toBeNull();
    expect(nextDueAfter([], now)).toBeNull();
    const rows = [row('a1', 'A', 'r1', { next_attempt_at: new Date(now + 5000) }), row('a2', 'A', 'r2', { status: 'sending', lease_until: new Date(now + 3000) }), row('b1', 'B', 'r1'), row('b2', 'B', 'r2', { next_attempt_at: null })];
    expect(nextDueAfter(rows, now)).toBe(now + 3001);
    expect(nextDueAfter(rows.slice(0, 1), now)).toBe(now + 5000);
  });
});

describe('signing (Standard Webhooks)', () => {
  const body = JSON.stringify({ event_type: 'command.created', event_object: { id: 'c1', object_type: 'command' }, timestamp: '2026-12-01T00:00:00.000Z' });

  it('signs so that the reference verifier accepts it, and refuses any change', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(secret)).toHaveLength(32);
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secretKey(secret)], 'msg_1', ts, body);
    const wh = new Webhook(secret);
    expect(wh.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => wh.verify(body + ' ', headers)).toThrow();
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    // Receivers reject timestamps more than 5 minutes off.
    const old = signedHeaders([secretKey(secret)], 'msg_1', ts - 600, body);
    expect(() => wh.verify(body, old)).toThrow();
  });

  it('sends both signatures after a rotation, space-separated, each verifying with its own secret', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const headers = signedHeaders([secretKey(current), secretKey(previous)], 'msg_1', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
  });
});

describe('messages', () => {
  it('have a webhook-id derived from the consumed record, the tenant and the kind (a redelivery is the same message)', () => {
    const a = { kind: 'integrator', id: 'acme' } as const;
    expect(messageId('r1', a, 'command.created')).toBe(messageId('r1', a, 'command.created'));
    expect(messageId('r1', a, 'command.created')).not.toBe(messageId('r1', { kind: 'utility', id: 'acme' }, 'command.created'));
    expect(messageId('r1', a, 'command.created')).not.toBe(messageId('r1', a, 'event.created'));
    const m = newMessage({ sourceId: 'r1', tenant: a, eventType: 'command.created', objectType: 'command', resourceId: 'c1', object: { id: 'c1' }, timestamp: '2026-12-01T00:00:00.000Z' });
    expect(JSON.parse(m.body)).toEqual({ event_type: 'command.created', event_object: { id: 'c1', object_type: 'command' }, timestamp: '2026-12-01T00:00:00.000Z' });
    expect(m.resourceKey).toBe('command:c1');
  });

  it('show an integrator only its own sites or devices among an event’s targets', () => {
    const e = { target_type: 'SITE', target_ids: ['mine', 'theirs'] } as Parameters<typeof eventForIntegrator>[0];
    expect(eventForIntegrator(e, ['mine']).target_ids).toEqual(['mine']);
    expect(eventForIntegrator(e, []).target_ids).toEqual([]);
    const g = { target_type: 'GROUP', target_ids: ['g1'] } as Parameters<typeof eventForIntegrator>[0];
    expect(eventForIntegrator(g, []).target_ids).toEqual(['g1']);
  });
});
