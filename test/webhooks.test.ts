/**
 * Webhooks as an integrator and a utility meet them: a real receiver on loopback
 * (WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8), a short retry schedule and disable time, every signature
 * checked by the Standard Webhooks reference verifier (the `standardwebhooks` package).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { credentialCommand } from '@efs/cli';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { startTestSystem, type TestSystem } from './harness/system.ts';
import { asSite, batteryWith, createEvent, discharge, enrolledSite, expectError, newProgram, uid, waitForCommands } from './dispatchHelpers.ts';
import { item } from './telemetryHelpers.ts';
import { kindsOf, parsed, WebhookReceiver } from './webhookReceiver.ts';

const run = await tierAvailable('postgres');

const WEBHOOK_KEYS = ['created_at', 'description', 'enabled', 'event_types', 'id', 'updated_at', 'url'];

describe.runIf(run)('webhooks: subscriptions, signed delivery, retries, disabling, replay, the feed', () => {
  let t: TestSystem;
  let rx: WebhookReceiver;
  let other: ApiClient;
  let program: { id: string; zip: string };

  const subscribe = async (client: ApiClient, name: string, body: Record<string, unknown> = {}, script?: (number | 'hang')[]) => {
    const r = await client.post('/v1/webhooks', { url: rx.endpoint(name, script), ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { id: string; secret: string; url: string };
  };

  const deliveries = async (id: string, query = ''): Promise<any[]> => {
    const r = await t.api.get(`/v1/webhooks/${id}/deliveries${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    rx = await new WebhookReceiver().start();
    t = await startTestSystem({
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
      WEBHOOK_DISABLE_AFTER: '4s',
      WEBHOOK_TIMEOUT_MS: '1500',
      // Far longer than any wait below: retries and expired leases wake the worker at their time, not a poll.
      WEBHOOK_POLL_MS: '60000',
      DISPATCH_SCHEDULER_POLL_MS: '600000',
      ENROLLMENT_AUTO_APPROVE_POLL_MS: '600000',
    });
    const out: string[] = [];
    expect(await credentialCommand('client-token', 'create', ['--integrator', 'integrator-b'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    other = apiClient(t.urls.public, /token: (\S+)/.exec(out.join('\n'))![1]);
    await waitFor(async () => (await other.get('/v1/webhooks')).status === 200, { what: "integrator B's token" });
    program = await newProgram(t);
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await rx?.stop();
  });

  it('creates a subscription with its secret shown once, reads, lists, updates and deletes it, each tenant only its own', async () => {
    const created = await subscribe(t.api, 'crud', { event_types: ['enrollment.created'], description: 'CRM' });
    expect(Object.keys(created).sort()).toEqual([...WEBHOOK_KEYS, 'secret'].sort());
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ event_types: ['enrollment.created'], description: 'CRM', enabled: true });
    const read = await t.api.get(`/v1/webhooks/${created.id}`);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body).sort()).toEqual(WEBHOOK_KEYS);
    expect((await t.api.get('/v1/webhooks')).body.map((w: any) => w.id)).toContain(created.id);
    expect(JSON.stringify((await t.api.get('/v1/webhooks')).body)).not.toContain('whsec_');

    // Another integrator and a utility see nothing of it.
    expectError(await other.get(`/v1/webhooks/${created.id}`), 404, 'NOT_FOUND');
    expectError(await other.patch(`/v1/webhooks/${created.id}`, { enabled: false }), 404, 'NOT_FOUND');
    expectError(await other.delete(`/v1/webhooks/${created.id}`), 404, 'NOT_FOUND');
    expectError(await t.utility.get(`/v1/webhooks/${created.id}`), 404, 'NOT_FOUND');
    expect((await other.get('/v1/webhooks')).body.map((w: any) => w.id)).not.toContain(created.id);

    const patched = await t.api.patch(`/v1/webhooks/${created.id}`, { event_types: ['enrollment.created', 'enrollment.updated'] });
    expect(patched.status).toBe(200);
    expect(patched.body.event_types).toEqual(['enrollment.created', 'enrollment.updated']);
    const deleted = await t.api.delete(`/v1/webhooks/${created.id}`);
    expect(deleted.status).toBe(200);
    expectError(await t.api.get(`/v1/webhooks/${created.id}`), 404, 'NOT_FOUND');
  });

  it('refuses bad input and destinations outside the rules with 400', async () => {
    const refused = [
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.8/hook',
      'http://192.168.1.2/hook',
      'http://100.64.0.1/hook',
      'http://[::1]:8080/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::ffff:10.0.0.1]/hook',
      'http://[::ffff:169.254.169.254]/hook',
      'http://0.0.0.0:9/hook',
      'http://224.0.0.1/hook',
      'http://user:pass@127.0.0.1:1/hook',
    ];
    for (const url of refused) {
      const r = await t.api.post('/v1/webhooks', { url });
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      expect(r.body.errors[0].path).toBe('url');
    }
    for (const url of ['ftp://127.0.0.1/hook', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url']) expectError(await t.api.post('/v1/webhooks', { url }), 400, 'VALIDATION_ERROR');
    const bad = await t.api.post('/v1/webhooks', { url: rx.endpoint('bad'), event_types: ['telemetry.published'] });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(bad.body.errors[0].path).toBe('event_types/0');
    expectError(await t.utility.post('/v1/webhooks', { url: rx.endpoint('bad'), event_types: ['command.created'] }), 400, 'VALIDATION_ERROR');
    expectError(await t.api.post('/v1/webhooks', { url: rx.endpoint('bad'), event_types: ['nope'] }), 400, 'VALIDATION_ERROR');
    expectError(await t.api.post('/v1/webhooks', { url: rx.endpoint('bad'), extra: 1 }), 400, 'VALIDATION_ERROR');
    const ok = await subscribe(t.api, 'patch-refused');
    expectError(await t.api.patch(`/v1/webhooks/${ok.id}`, { url: 'http://169.254.169.254/' }), 400, 'VALIDATION_ERROR');
    await t.api.delete(`/v1/webhooks/${ok.id}`);
  });

  it('delivers enrollment, event and command messages signed as Standard Webhooks, in order per resource, to the integrator and the utility', async () => {
    const integrator = await subscribe(t.api, 'integrator-all');
    const utility = await subscribe(t.utility, 'utility-all');
    const enrollmentsOnly = await subscribe(t.api, 'integrator-enrollments', { event_types: ['enrollment.updated'] });
    const otherIntegrator = await subscribe(other, 'integrator-b-all');

    const site = await enrolledSite(t, program, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)]);
    const event = (await createEvent(t, { program_id: program.id, target_type: 'SITE', target_ids: [site.siteId], actions: [discharge(6000, 3600, 600)] })).body;
    const commands = await waitForCommands(t.api, event.id, 2);
    const ack = await t.api.patch(`/v1/command/${commands[0].id}`, { device_status: 'OK' });
    expect(ack.status).toBe(200);
    expect((await t.utility.delete(`/v1/events/${event.id}`)).status).toBe(200);

    const mine = (kind: string) => (r: any) => r.message.event_type === kind;
    await rx.waitFor('integrator-all', (rs) => kindsOf(rs).filter((k) => k === 'command.canceled').length === 2 && kindsOf(rs).includes('event.canceled'), 'integrator messages');
    const got = rx.verified('integrator-all', integrator.secret);
    const enrollment = got.filter((r) => r.message.event_object.object_type === 'enrollment' && r.message.event_object.id === site.enrollmentId);
    expect(enrollment.map((r) => r.message.event_type)).toEqual(['enrollment.created', 'enrollment.updated']);
    expect(enrollment[0]!.message.event_object.status).toBe('PENDING');
    expect(enrollment[1]!.message.event_object.status).toBe('ACTIVE');
    expect(Object.keys(enrollment[1]!.message.event_object)).not.toContain('integrator_id');

    const ofEvent = got.filter((r) => r.message.event_object.object_type === 'event' && r.message.event_object.id === event.id);
    expect(ofEvent.map((r) => r.message.event_type)).toEqual(['event.created', 'event.canceled']);
    expect(ofEvent[0]!.message.event_object).toMatchObject({ id: event.id, program_id: program.id, target_type: 'SITE', target_ids: [site.siteId] });
    expect(Object.keys(ofEvent[0]!.message.event_object)).not.toContain('utility_id');
    for (const c of commands) {
      const ofCommand = got.filter((r) => r.message.event_object.object_type === 'command' && r.message.event_object.id === c.id);
      const expected = c.id === commands[0].id ? ['command.created', 'command.updated', 'command.canceled'] : ['command.created', 'command.canceled'];
      expect(ofCommand.map((r) => r.message.event_type), c.id).toEqual(expected);
      expect(ofCommand[0]!.message.event_object).toMatchObject({ id: c.id, event_id: event.id, site_id: site.siteId, device_status: 'PENDING', status: 'OK' });
      expect(ofCommand.at(-1)!.message.event_object.status).toBe('CANCELED');
    }
    for (const r of got) {
      expect(Object.keys(r.message).sort()).toEqual(['event_object', 'event_type', 'timestamp']);
      expect(r.headers['webhook-id']).toMatch(/^msg_/);
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(got.length);

    // The utility: its program's enrollment and event, never commands.
    await rx.waitFor('utility-all', (rs) => kindsOf(rs).includes('event.canceled'), 'utility messages');
    const forUtility = rx.verified('utility-all', utility.secret).filter((r) => [site.enrollmentId, event.id].includes(r.message.event_object.id));
    expect(forUtility.map((r) => r.message.event_type)).toEqual(expect.arrayContaining(['enrollment.created', 'enrollment.updated', 'event.created', 'event.canceled']));
    expect(forUtility.find(mine('enrollment.updated'))!.message.event_object).toMatchObject({ id: site.enrollmentId, group_ids: [], status: 'ACTIVE' });
    expect(kindsOf(rx.at('utility-all')).filter((k) => k.startsWith('command.'))).toEqual([]);

    // The filter, and the other integrator: nothing of this site.
    await rx.waitFor('integrator-enrollments', (rs) => rs.some((r) => parsed(r).event_object.id === site.enrollmentId), 'filtered subscription');
    expect(new Set(kindsOf(rx.at('integrator-enrollments')))).toEqual(new Set(['enrollment.updated']));
    rx.verified('integrator-enrollments', enrollmentsOnly.secret);
    expect(rx.at('integrator-b-all').filter((r) => r.body.includes(site.siteId) || r.body.includes(event.id))).toEqual([]);
    void otherIntegrator;

    // Tampering: the reference verifier refuses a changed body, id, timestamp or signature.
    const sample = rx.at('integrator-all')[0]!;
    const wh = new Webhook(integrator.secret);
    const h = sample.headers as Record<string, string>;
    expect(() => wh.verify(sample.body.replace('"event_type":"', '"event_type":"x'), h)).toThrow();
    expect(() => wh.verify(sample.body, { ...h, 'webhook-id': 'msg_forged' })).toThrow();
    expect(() => wh.verify(sample.body, { ...h, 'webhook-timestamp': String(Number(h['webhook-timestamp']) + 1) })).toThrow();
    expect(() => wh.verify(sample.body, { ...h, 'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64') })).toThrow();
    expect(() => new Webhook(utility.secret).verify(sample.body, h)).toThrow();

    for (const s of [integrator, enrollmentsOnly]) await t.api.delete(`/v1/webhooks/${s.id}`);
    await t.utility.delete(`/v1/webhooks/${utility.id}`);
    await other.delete(`/v1/webhooks/${otherIntegrator.id}`);
  });

  it("never tells an integrator of another's event when its own site takes the same id later", async () => {
    const mine = await subscribe(t.api, 'same-id-a');
    const theirs = await subscribe(other, 'same-id-b');
    const siteId = uid('shared-site');
    await enrolledSite(t, program, [batteryWith(uid('b'), 5000)], { siteId });
    const event = (await createEvent(t, { program_id: program.id, target_type: 'SITE', target_ids: [siteId], actions: [discharge(3000, 3600, 600)] })).body;
    await rx.waitFor('same-id-a', (rs) => rs.some((r) => parsed(r).event_type === 'event.created' && parsed(r).event_object.id === event.id), 'event.created for the owner');
    // Integrator B enrolls a site of its own with the same id in the same program, then the event changes.
    const b = await enrolledSite(t, program, [batteryWith(uid('b'), 5000)], { siteId, client: other });
    await rx.waitFor('same-id-b', (rs) => rs.some((r) => parsed(r).event_object.id === b.enrollmentId), "B's own enrollment");
    expect((await t.utility.delete(`/v1/events/${event.id}`)).status).toBe(200);
    await rx.waitFor('same-id-a', (rs) => rs.some((r) => parsed(r).event_type === 'event.canceled' && parsed(r).event_object.id === event.id), 'event.canceled for the owner');
    // B's enrollment messages came after the cancel's; B got nothing of the event.
    await rx.waitFor('same-id-b', (rs) => rs.filter((r) => parsed(r).event_object.id === b.enrollmentId).length >= 2, "B's enrollment messages");
    expect(rx.at('same-id-b').filter((r) => r.body.includes(event.id))).toEqual([]);
    await t.api.delete(`/v1/webhooks/${mine.id}`);
    await other.delete(`/v1/webhooks/${theirs.id}`);
  });

  it('announces a settings request (settings.apply) to the integrator and telemetry (telemetry.published) to the utility', async () => {
    const integrator = await subscribe(t.api, 'settings', { event_types: ['settings.apply'] });
    const utility = await subscribe(t.utility, 'telemetry', { event_types: ['telemetry.published'] });
    const site = await enrolledSite(t, program);
    const [deviceId] = site.devices;
    const user = await asSite(t, site.siteId);
    const patched = await user.patch(`/v1/site/${site.siteId}/device/${deviceId}`, { settings: { backup_reserve_percentage: 40 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const [apply] = await rx.waitFor('settings', (rs) => rs.length >= 1, 'settings.apply');
    const m = new Webhook(integrator.secret).verify(apply!.body, apply!.headers as Record<string, string>) as any;
    expect(m.event_type).toBe('settings.apply');
    expect(m.event_object).toMatchObject({ object_type: 'settings_request', device_id: deviceId, site_id: site.siteId, settings: { backup_reserve_percentage: 40 }, status: 'PENDING' });

    const sent = await t.api.post('/v1/telemetry/BATTERY', { telemetry: [item(deviceId!, 0, { battery_last_power_discharge_w: 1200, home_last_power_w: 800 })] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [published] = await rx.waitFor('telemetry', (rs) => rs.some((r) => parsed(r).event_object.device_id === deviceId), 'telemetry.published');
    const p = new Webhook(utility.secret).verify(published!.body, published!.headers as Record<string, string>) as any;
    expect(p.event_type).toBe('telemetry.published');
    expect(p.event_object).toMatchObject({ object_type: 'telemetry', program_id: program.id, device_id: deviceId, battery_power_discharge_w: 1200, home_power_w: 800 });
    await t.api.delete(`/v1/webhooks/${integrator.id}`);
    await t.utility.delete(`/v1/webhooks/${utility.id}`);
  });

  it('retries a failed delivery with the same webhook-id and lists each attempt', async () => {
    const sub = await subscribe(t.api, 'flaky', { event_types: ['enrollment.created'] }, [500, 503, 200]);
    const site = await enrolledSite(t, program);
    const rs = await rx.waitFor('flaky', (r) => r.filter((x) => parsed(x).event_object.id === site.enrollmentId).length === 3, 'three attempts');
    const attempts = rs.filter((x) => parsed(x).event_object.id === site.enrollmentId);
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    rx.verified('flaky', sub.secret);
    const delivery = await waitFor(async () => (await deliveries(sub.id, '?status=succeeded')).find((d: any) => d.webhook_id === attempts[0]!.headers['webhook-id']), { what: 'delivery recorded' });
    expect(delivery.attempts.map((a: any) => [a.status, a.response_status])).toEqual([
      ['failed', 500],
      ['failed', 503],
      ['succeeded', 200],
    ]);
    expect(delivery).toMatchObject({ event_type: 'enrollment.created', status: 'succeeded', next_attempt_at: null });
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });

  it('disables an endpoint at once on 410 and keeps its queue; PATCH enabled=true re-enables it and the queue flows', async () => {
    const sub = await subscribe(t.api, 'gone', { event_types: ['enrollment.created'] }, [410]);
    const first = await enrolledSite(t, program);
    await rx.waitFor('gone', (r) => r.length >= 1, 'the 410');
    await waitFor(async () => (await t.api.get(`/v1/webhooks/${sub.id}`)).body.enabled === false, { what: 'disabled by 410' });
    const second = await enrolledSite(t, program);
    await new Promise((r) => setTimeout(r, 600));
    expect(rx.at('gone').some((r) => parsed(r).event_object.id === second.enrollmentId)).toBe(false);
    rx.answer('gone', [200]);
    const enabled = await t.api.patch(`/v1/webhooks/${sub.id}`, { enabled: true });
    expect(enabled.body.enabled).toBe(true);
    await rx.waitFor('gone', (r) => r.some((x) => parsed(x).event_object.id === first.enrollmentId && x !== r[0]), 'the queued delivery after re-enabling');
    expect(rx.at('gone').filter((x) => parsed(x).event_object.id === first.enrollmentId && rx.at('gone').indexOf(x) > 0)).toHaveLength(1);
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });

  it('disables an endpoint failing without a success for WEBHOOK_DISABLE_AFTER, gives messages up after the schedule, and replays one delivery and everything failed since a time', async () => {
    const sub = await subscribe(t.api, 'dead', { event_types: ['enrollment.created'] }, [500]);
    const since = new Date().toISOString();
    const [site, site2] = await Promise.all([enrolledSite(t, program), enrolledSite(t, program)]);
    // Both messages are given up after the schedule (4 attempts), within a second or so.
    const failed = await waitFor(async () => {
      const r = await deliveries(sub.id, '?status=failed');
      return r.length >= 2 ? r : undefined;
    }, { what: 'deliveries given up' });
    expect((await t.api.get(`/v1/webhooks/${sub.id}`)).body.enabled).toBe(true);
    // Still no success 4 s after the first failure: the next failure disables the endpoint.
    await new Promise((r) => setTimeout(r, 4100));
    const later = await enrolledSite(t, program);
    await waitFor(async () => (await t.api.get(`/v1/webhooks/${sub.id}`)).body.enabled === false, { what: 'disabled after failing 4 s' });
    for (const d of failed) {
      expect(d.attempts).toHaveLength(4);
      expect(d.attempts.every((a: any) => a.status === 'failed' && a.response_status === 500)).toBe(true);
    }
    rx.answer('dead', [200]);
    expect((await t.api.patch(`/v1/webhooks/${sub.id}`, { enabled: true })).body.enabled).toBe(true);
    const one = await t.api.post(`/v1/webhooks/${sub.id}/deliveries/${failed[0].id}/replay`);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body).toMatchObject({ webhook_id: failed[0].webhook_id, status: 'pending' });
    await rx.waitFor('dead', (r) => r.filter((x) => x.headers['webhook-id'] === failed[0].webhook_id).length === 5, 'the replayed delivery');
    const replay = await t.api.post(`/v1/webhooks/${sub.id}/replay`, { since });
    expect(replay.status).toBe(200);
    expect(replay.body.replayed).toBe(failed.length - 1);
    await rx.waitFor('dead', (r) => failed.every((d: any) => r.filter((x) => x.headers['webhook-id'] === d.webhook_id).length === 5), 'every failed message again');
    for (const s of [site, site2]) expect(rx.verified('dead', sub.secret).filter((r) => r.message.event_object.id === s.enrollmentId)).toHaveLength(5);
    // What was queued while the endpoint was disabled flowed once it was enabled again.
    await rx.waitFor('dead', (r) => r.some((x) => parsed(x).event_object.id === later.enrollmentId && x.headers['webhook-signature']), 'the later enrollment');
    expectError(await t.api.post(`/v1/webhooks/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`), 404, 'NOT_FOUND');
    expectError(await other.post(`/v1/webhooks/${sub.id}/replay`, { since }), 404, 'NOT_FOUND');
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });

  it('after a rotation signs with both secrets for 24 hours, each verifying alone', async () => {
    const sub = await subscribe(t.api, 'rotated', { event_types: ['enrollment.created'] });
    const rotated = await t.api.post(`/v1/webhooks/${sub.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(sub.secret);
    const site = await enrolledSite(t, program);
    const [r] = (await rx.waitFor('rotated', (rs) => rs.some((x) => parsed(x).event_object.id === site.enrollmentId), 'a message after rotation')).filter((x) => parsed(x).event_object.id === site.enrollmentId);
    const signatures = String(r!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    const h = r!.headers as Record<string, string>;
    expect((new Webhook(rotated.body.secret).verify(r!.body, h) as any).event_type).toBe('enrollment.created');
    expect((new Webhook(sub.secret).verify(r!.body, h) as any).event_type).toBe('enrollment.created');
    expect(() => new Webhook(rotated.body.secret).verify(r!.body, { ...h, 'webhook-signature': signatures[1]! })).toThrow();
    expect(() => new Webhook(sub.secret).verify(r!.body, { ...h, 'webhook-signature': signatures[0]! })).toThrow();
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });

  it('fails a delivery whose name later resolves to a refused address, without connecting', async () => {
    const sub = await subscribe(t.api, 'rebound', { event_types: ['enrollment.created'] });
    await t.system.db.knex.raw(`update webhooks.subscriptions set url = 'http://169.254.169.254/latest' where id = ?`, [sub.id]);
    await enrolledSite(t, program);
    const d = await waitFor(async () => {
      return (await deliveries(sub.id)).find((x: any) => x.attempts.length > 0);
    }, { what: 'a refused attempt' });
    expect(d.attempts[0]).toMatchObject({ status: 'failed', response_status: null });
    expect(d.attempts[0].error).toMatch(/destination refused.*169\.254\.169\.254.*link-local/);
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });

  it('never lets a slow endpoint delay another tenant', async () => {
    const slow = await subscribe(other, 'slow', {}, ['hang']);
    const fast = await subscribe(t.api, 'fast', { event_types: ['enrollment.created'] });
    // Integrator B's endpoint hangs on every message of its own enrollments.
    const bSites = await Promise.all([1, 2, 3].map(() => enrolledSite(t, program, undefined, { client: other })));
    await rx.waitFor('slow', (r) => r.length >= 1, 'the slow endpoint busy');
    const started = Date.now();
    const site = await enrolledSite(t, program);
    await rx.waitFor('fast', (r) => r.some((x) => parsed(x).event_object.id === site.enrollmentId && x.at - started < 1500 + 5000), 'the fast endpoint served');
    const arrived = rx.at('fast').find((x) => parsed(x).event_object.id === site.enrollmentId)!;
    const created = new Date(parsed(arrived).timestamp).getTime();
    expect(arrived.at - created).toBeLessThan(1000);
    void bSites;
    await other.delete(`/v1/webhooks/${slow.id}`);
    await t.api.delete(`/v1/webhooks/${fast.id}`);
  });

  it('serves the same messages, with their webhook-ids, on the polling feed, resumable by cursor, each tenant only its own', async () => {
    const sub = await subscribe(t.api, 'feed');
    const site = await enrolledSite(t, program);
    await rx.waitFor('feed', (r) => r.filter((x) => parsed(x).event_object.id === site.enrollmentId).length === 2, 'enrollment messages');
    const all: any[] = [];
    let after = '';
    for (;;) {
      const page = await t.api.get(`/v1/notifications?limit=7${after ? `&after=${after}` : ''}`);
      expect(page.status).toBe(200);
      all.push(...page.body);
      if (page.body.length < 7) break;
      after = page.body.at(-1).cursor;
    }
    for (const n of all) expect(Object.keys(n).sort()).toEqual(['cursor', 'event_object', 'event_type', 'timestamp', 'webhook_id']);
    expect(all.map((n) => Number(n.cursor))).toEqual([...all.map((n) => Number(n.cursor))].sort((a, b) => a - b));
    expect(new Set(all.map((n) => n.webhook_id)).size).toBe(all.length);
    for (const r of rx.at('feed')) {
      const n = all.find((x) => x.webhook_id === r.headers['webhook-id']);
      expect(n, `${r.headers['webhook-id']} in the feed`).toBeDefined();
      const m = parsed(r);
      expect({ event_type: n.event_type, event_object: n.event_object, timestamp: n.timestamp }).toEqual(m);
    }
    const tail = await t.api.get(`/v1/notifications?after=${all.at(-1).cursor}`);
    expect(tail.body).toEqual([]);
    const theirs = (await other.get('/v1/notifications?limit=1000')).body as any[];
    expect(theirs.some((n) => all.some((x) => x.webhook_id === n.webhook_id))).toBe(false);
    const utilityFeed = (await t.utility.get('/v1/notifications?limit=1000')).body as any[];
    expect(utilityFeed.some((n) => n.event_type.startsWith('command.'))).toBe(false);
    expectError(await t.api.get('/v1/notifications?after=abc'), 400, 'VALIDATION_ERROR');
    await t.api.delete(`/v1/webhooks/${sub.id}`);
  });
});

describe.runIf(run)('webhooks: retention', () => {
  let t: TestSystem;
  let rx: WebhookReceiver;

  beforeAll(async () => {
    rx = await new WebhookReceiver().start();
    t = await startTestSystem({
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      // Far longer than any wait below: retries and expired leases wake the worker at their time, not a poll.
      WEBHOOK_POLL_MS: '60000',
      DISPATCH_SCHEDULER_POLL_MS: '600000',
      ENROLLMENT_AUTO_APPROVE_POLL_MS: '600000',
      WEBHOOK_RETENTION: '2s',
      WEBHOOK_MAINTENANCE_MS: '250',
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await rx?.stop();
  });

  it('removes messages past WEBHOOK_RETENTION with their finished deliveries, and keeps a message whose delivery is still open', async () => {
    const program = await newProgram(t);
    const done = (await t.api.post('/v1/webhooks', { url: rx.endpoint('done'), event_types: ['enrollment.created'] })).body as { id: string };
    const open = (await t.api.post('/v1/webhooks', { url: rx.endpoint('open', [500]), event_types: ['enrollment.updated'] })).body as { id: string };
    const site = await enrolledSite(t, program);
    const ofSite = (n: any) => n.event_object.id === site.enrollmentId;
    const feed = async () => ((await t.api.get('/v1/notifications?limit=1000')).body as any[]).filter(ofSite);
    const list = async (id: string) => (await t.api.get(`/v1/webhooks/${id}/deliveries`)).body as any[];
    await waitFor(async () => (await list(done.id)).some((d) => d.status === 'succeeded'), { what: 'the created message delivered' });
    await waitFor(async () => (await list(open.id)).some((d) => d.status === 'pending' && d.attempts.length === 1), { what: 'the updated message failed once, its retry an hour away' });
    expect((await feed()).map((n) => n.event_type).sort()).toEqual(['enrollment.created', 'enrollment.updated']);

    // Two seconds on, the sweep has removed the delivered message and its delivery; the open one stays.
    await waitFor(async () => (await feed()).length === 1, { what: 'the delivered message removed', timeoutMs: 15_000 });
    expect((await feed()).map((n) => n.event_type)).toEqual(['enrollment.updated']);
    expect(await list(done.id)).toEqual([]);
    const stillOpen = await list(open.id);
    expect(stillOpen).toHaveLength(1);
    expect(stillOpen[0]).toMatchObject({ status: 'pending', event_type: 'enrollment.updated' });
  });
});
