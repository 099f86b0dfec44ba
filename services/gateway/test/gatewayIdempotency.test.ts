/**
 * Idempotency-Key (decisions.md, Errors; Stripe's semantics), the reply grace after a request's
 * deadline and load shedding, on the real gateway in front of a stub service whose every
 * execution is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperations, type RequestMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { createLogger } from '@efs/logging';
import { errorReply, InProcessTransport } from '@efs/messaging';
import { KeyEncryption } from '@efs/db';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable, waitFor, type TestDatabase } from '@efs/testing';
import type { RouteDef } from '../src/routes/route.ts';
import { KnexIdempotencyKeys } from '../src/idempotency/idempotencyKeys.ts';
import { createTestDb, expectErrorBody, startGateway, type GatewayHarness } from './harness.ts';

const run = await tierAvailable('postgres');

const WriteBody = z.object({ name: z.string().min(1), mode: z.enum(['ok', 'refuse', 'fail', 'late', 'hold']).default('ok') });
const Written = z.object({ execution: z.number().int(), name: z.string() });
const Ops = defineOperations('catalog', {
  write: { body: WriteBody, response: Written, errors: ['CONFLICT'] },
  update: { params: z.object({ id: z.string() }), body: WriteBody, response: Written, errors: ['CONFLICT'] },
});
const base = { summary: 'Write', tags: ['Write'] };
const routes: RouteDef[] = [
  { ...base, method: 'POST', url: '/v1/write', listener: 'public', auth: { accepts: ['client'] }, operation: Ops.write },
  { ...base, method: 'PATCH', url: '/v1/write/:id', listener: 'public', auth: { accepts: ['client'] }, operation: Ops.update },
  { ...base, method: 'POST', url: '/v1/write', listener: 'utility', auth: { accepts: ['utility'] }, operation: Ops.write },
];

const TIMEOUT_MS = 400;
const GRACE_MS = 100;
const MAX_IN_FLIGHT = 4;

describe.runIf(run)('Idempotency-Key, reply grace and load shedding at the gateway', () => {
  let database: TestDatabase;
  let transport: InProcessTransport;
  let h: GatewayHarness;
  /** Every execution of the stub service, by body name. */
  const executions: string[] = [];
  let gates: (() => void)[] = [];
  const openGates = () => {
    for (const g of gates) g();
    gates = [];
  };

  beforeAll(async () => {
    database = await createTestDb();
    transport = new InProcessTransport({ logger: createLogger({ name: 't', level: 'silent' }) });
    await transport.start();
    await transport.serve('catalog', async (request: RequestMessage) => {
      const body = WriteBody.parse(JSON.parse(request.body ?? '{}'));
      if (body.mode === 'late' || body.mode === 'hold') await new Promise<void>((r) => gates.push(r));
      if (body.mode === 'fail') return errorReply(Errors.SERVICE_UNAVAILABLE('the store is down; nothing was stored'));
      executions.push(body.name);
      if (body.mode === 'refuse') return errorReply(Errors.CONFLICT(`${body.name} exists`));
      return { status: 200, body: JSON.stringify({ execution: executions.length, name: body.name }) };
    });
    h = await startGateway({
      database,
      transport,
      routes,
      env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), REQUEST_REPLY_GRACE_MS: String(GRACE_MS), GATEWAY_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) },
    });
  });
  afterAll(async () => {
    openGates();
    await h?.stop();
    await transport?.stop();
    await database?.drop();
  });

  const key = () => `key-${Math.random().toString(36).slice(2)}`;
  const ran = (name: string) => executions.filter((n) => n === name).length;

  it('replays the first answer, status and body, for the same key and body, without running it again', async () => {
    const k = key();
    const first = await h.api.post('/v1/write', { name: 'a1' }, { 'idempotency-key': k });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await h.api.post('/v1/write', { name: 'a1' }, { 'idempotency-key': k });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(ran('a1')).toBe(1);
    // Kept sealed with the key-encryption key (answers can carry secrets and tokens), never as sent.
    const kept = await h.db.knex.withSchema('auth').table('idempotency_keys').where({ key: k }).first();
    expect(kept.body).toMatch(/^enc:v1:/);
    // (The answer as JSON holds quotes and braces, which the sealed text never does.)
    expect(kept.body).not.toContain('"name":"a1"');
    expect(kept.body).not.toMatch(/["{}]/);
    // A PATCH too; without a key every request runs.
    const p = key();
    const patched = await h.api.patch('/v1/write/x', { name: 'p1' }, { 'idempotency-key': p });
    expect((await h.api.patch('/v1/write/x', { name: 'p1' }, { 'idempotency-key': p })).body).toEqual(patched.body);
    await h.api.post('/v1/write', { name: 'unkeyed' });
    await h.api.post('/v1/write', { name: 'unkeyed' });
    expect([ran('p1'), ran('unkeyed')]).toEqual([1, 2]);
  });

  it('replays a refusal (4xx) as it was', async () => {
    const k = key();
    const first = await h.api.post('/v1/write', { name: 'r1', mode: 'refuse' }, { 'idempotency-key': k });
    expectErrorBody(first, 409, 'CONFLICT');
    const again = await h.api.post('/v1/write', { name: 'r1', mode: 'refuse' }, { 'idempotency-key': k });
    expect([again.status, again.body]).toEqual([409, first.body]);
    expect(ran('r1')).toBe(1);
  });

  it('answers 409 CONFLICT, naming the header, for the same key with another body, and runs nothing', async () => {
    const k = key();
    expect((await h.api.post('/v1/write', { name: 'b1' }, { 'idempotency-key': k })).status).toBe(200);
    const other = await h.api.post('/v1/write', { name: 'b2' }, { 'idempotency-key': k });
    expectErrorBody(other, 409, 'CONFLICT');
    expect(other.body.errors).toEqual([{ message: expect.any(String), path: 'idempotency-key' }]);
    expect(ran('b2')).toBe(0);
  });

  it('keeps keys apart by credential and by path', async () => {
    const k = key();
    const client = await h.api.post('/v1/write', { name: 'c1' }, { 'idempotency-key': k });
    const utility = await h.utility.post('/v1/write', { name: 'c1' }, { 'idempotency-key': k });
    const patch = await h.api.patch('/v1/write/c1', { name: 'c1' }, { 'idempotency-key': k });
    expect([client.status, utility.status, patch.status]).toEqual([200, 200, 200]);
    expect(ran('c1')).toBe(3);
  });

  it('refuses a key that is not 1 to 255 printable characters with 400 naming the header, before any work', async () => {
    const long = await h.api.post('/v1/write', { name: 'k1' }, { 'idempotency-key': 'x'.repeat(256) });
    expectErrorBody(long, 400, 'VALIDATION_ERROR');
    expect(long.body.detail[0].loc).toEqual(['header', 'idempotency-key']);
    expect((await h.api.post('/v1/write', { name: 'k1' }, { 'idempotency-key': 'x'.repeat(255) })).status).toBe(200);
    expect(ran('k1')).toBe(1);
  });

  it('answers 409 with Retry-After while the first request with the key is still running, then replays its answer', async () => {
    const k = key();
    const first = h.api.post('/v1/write', { name: 'f1', mode: 'hold' }, { 'idempotency-key': k });
    await waitFor(() => gates.length > 0, { what: 'the first request at the service' });
    const during = await h.api.post('/v1/write', { name: 'f1', mode: 'hold' }, { 'idempotency-key': k });
    expectErrorBody(during, 409, 'CONFLICT');
    expect(during.headers.get('retry-after')).toBe('1');
    openGates();
    const answered = await first;
    expect(answered.status).toBe(200);
    const after = await h.api.post('/v1/write', { name: 'f1', mode: 'hold' }, { 'idempotency-key': k });
    expect([after.status, after.body, after.headers.get('idempotent-replayed')]).toEqual([200, answered.body, 'true']);
    expect(ran('f1')).toBe(1);
  });

  it('a retry after a 503 whose work did finish gets that work\'s answer, not a second execution', async () => {
    const k = key();
    const first = await h.api.post('/v1/write', { name: 'l1', mode: 'late' }, { 'idempotency-key': k });
    expectErrorBody(first, 503, 'SERVICE_UNAVAILABLE');
    expect(first.headers.get('retry-after')).toBe('1');
    openGates();
    await waitFor(() => ran('l1') === 1, { what: 'the late execution' });
    const retry = await waitFor(async () => {
      const r = await h.api.post('/v1/write', { name: 'l1', mode: 'late' }, { 'idempotency-key': k });
      return r.status === 200 ? r : undefined;
    }, { what: 'the retry answered' });
    expect(retry.body).toEqual({ execution: expect.any(Number), name: 'l1' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(ran('l1')).toBe(1);
  });

  it('frees the key of a request that did nothing (5xx), so its retry runs', async () => {
    const k = key();
    expectErrorBody(await h.api.post('/v1/write', { name: 'e1', mode: 'fail' }, { 'idempotency-key': k }), 503, 'SERVICE_UNAVAILABLE');
    // The same key now carries a body that succeeds: no 409, the request runs.
    expect((await h.api.post('/v1/write', { name: 'e1' }, { 'idempotency-key': k })).status).toBe(200);
    expect(ran('e1')).toBe(1);
  });

  it('forgets keys after their 24 hours (purged, and a key past them runs again)', async () => {
    const k = key();
    expect((await h.api.post('/v1/write', { name: 't1' }, { 'idempotency-key': k })).status).toBe(200);
    await h.db.knex.withSchema('auth').table('idempotency_keys').where({ key: k }).update({ created_at: h.db.knex.raw("now() - interval '24 hours 1 second'") });
    const again = await h.api.post('/v1/write', { name: 't1' }, { 'idempotency-key': k });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(ran('t1')).toBe(2);
    const k2 = key();
    await h.api.post('/v1/write', { name: 't2' }, { 'idempotency-key': k2 });
    await h.db.knex.withSchema('auth').table('idempotency_keys').where({ key: k2 }).update({ created_at: h.db.knex.raw("now() - interval '25 hours'") });
    expect(await new KnexIdempotencyKeys({ knex: h.db.knex, schema: 'auth', ttlSeconds: 24 * 3600, lockSeconds: 60, encryption: KeyEncryption.parse(DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY) }).purge()).toBeGreaterThanOrEqual(1);
    expect(await h.db.knex.withSchema('auth').table('idempotency_keys').where({ key: k2 }).first()).toBeUndefined();
  });

  it(`sheds the request over GATEWAY_MAX_IN_FLIGHT (${MAX_IN_FLIGHT}) with 503 and Retry-After before any work`, async () => {
    const before = executions.length;
    const held = Array.from({ length: MAX_IN_FLIGHT }, (_, i) => h.api.post('/v1/write', { name: `s${i}`, mode: 'hold' }));
    await waitFor(() => gates.length === MAX_IN_FLIGHT, { what: 'the held requests at the service' });
    const shedKey = key();
    const shed = await h.api.post('/v1/write', { name: 'shed' }, { 'idempotency-key': shedKey });
    expectErrorBody(shed, 503, 'SERVICE_UNAVAILABLE');
    expect(shed.headers.get('retry-after')).toBe('1');
    // Before any work: not even authentication (a bad token is shed the same) or a key.
    expect((await apiClient(h.urls.public, 'efs_ct_nonsense').post('/v1/write', { name: 'shed' })).status).toBe(503);
    expect(await h.db.knex.withSchema('auth').table('idempotency_keys').where({ key: shedKey }).first()).toBeUndefined();
    expect((await fetch(`${h.urls.public}/healthz`)).status).toBe(200);
    openGates();
    await Promise.all(held);
    expect(ran('shed')).toBe(0);
    expect(executions.length - before).toBe(MAX_IN_FLIGHT);
    expect((await h.api.post('/v1/write', { name: 'after-shed' })).status).toBe(200);
  });

  it('declares the Idempotency-Key header and the 409 on every POST and PATCH in OpenAPI', async () => {
    const doc = (await apiClient(h.urls.public).get('/openapi.json')).body;
    for (const op of [doc.paths['/v1/write'].post, doc.paths['/v1/write/{id}'].patch]) {
      expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key', required: false })]));
      expect(op.responses['409']).toBeDefined();
    }
  });
});
