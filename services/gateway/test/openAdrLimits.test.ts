/**
 * The OpenADR face under the listener's limits: its requests count in the gateway's in-flight
 * limit (503 at once past it) and against a per-client rate limit (429), both answered in the
 * OpenADR problem shape. The catalog is a stub on the in-process transport that holds requests
 * until the test lets them go.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { tierAvailable, waitFor, type TestDatabase } from '@efs/testing';
import { KnexOpenAdrClientStore } from '../src/openadr/clientStore.ts';
import { createTestDb, startGateway, type GatewayHarness } from './harness.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('OpenADR face: load shedding and rate limits', () => {
  let database: TestDatabase;
  let transport: InProcessTransport;
  let h: GatewayHarness;
  let gates: (() => void)[] = [];
  let holding = false;
  const tokens: Record<'BL' | 'VEN', string> = { BL: '', VEN: '' };

  beforeAll(async () => {
    database = await createTestDb();
    transport = new InProcessTransport({ logger: createLogger({ name: 't', level: 'silent' }) });
    await transport.start();
    await transport.serve('catalog', async () => {
      if (holding) await new Promise<void>((r) => gates.push(r));
      return { status: 200, body: '[]' };
    });
    h = await startGateway({ database, transport, env: { GATEWAY_MAX_IN_FLIGHT: '2', RATE_LIMIT_UTILITY: '5', RATE_LIMIT_CLIENT: '2' } });
    await h.store.ensureUtility('grid-co', 'Grid Co');
    await h.store.ensureIntegrator('acme', 'Acme');
    const clients = new KnexOpenAdrClientStore(h.db.knex, 'auth');
    for (const c of [await clients.create({ role: 'BL', utility_id: 'grid-co' }), await clients.create({ role: 'VEN', integrator_id: 'acme' })]) {
      const r = await fetch(`${h.urls.utility}/openadr3/3.1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.client.id, client_secret: c.secret }).toString(),
      });
      expect(r.status).toBe(200);
      tokens[c.client.role] = ((await r.json()) as { access_token: string }).access_token;
    }
  });
  afterAll(async () => {
    for (const g of gates) g();
    await h?.stop();
    await transport?.stop();
    await database?.drop();
  });

  const programs = (role: 'BL' | 'VEN') => fetch(`${h.urls.utility}/openadr3/3.1/programs`, { headers: { authorization: `Bearer ${tokens[role]}` } });

  it('answers 503 at once, as a problem, past GATEWAY_MAX_IN_FLIGHT; the requests in flight are answered', async () => {
    holding = true;
    const held = [programs('BL'), programs('BL')];
    await waitFor(() => gates.length === 2, { what: 'two requests held at the catalog' });
    const shed = await programs('BL');
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('1');
    expect(await shed.json()).toMatchObject({ type: 'about:blank', status: 503, title: 'Service Unavailable' });
    holding = false;
    for (const g of gates) g();
    gates = [];
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
  });

  it("counts each client against its owner kind's rate limit, answering 429 as a problem", async () => {
    // Its token request took one of the VEN's two: one more request, then 429.
    expect((await programs('VEN')).status).toBe(200);
    const over = await programs('VEN');
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(await over.json()).toMatchObject({ type: 'about:blank', status: 429 });
    // The BL client has a limit of its own (RATE_LIMIT_UTILITY): its token and two requests used above.
    const bl = await programs('BL');
    expect(bl.status).toBe(200);
    expect(bl.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
  });
});
