/**
 * Token kinds end to end through the gateway: site tokens (issued for the integrator's own site
 * only, one hour, one site, stateless across replicas, keys rotatable), single-use portal session
 * tokens and the portal session they start, and client-token / utility-key revocation reaching a
 * second gateway replica within seconds without any per-request database lookup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { apiClient, tierAvailable, waitFor } from '@efs/testing';
import { rotateSigningKey } from '../services/gateway/src/auth/signingKeys.ts';
import { hashToken } from '../services/gateway/src/auth/tokens.ts';
import { credentialCommand } from '../services/gateway/src/credentialsCli.ts';
import {
  createTestDb,
  installStubServices,
  portalCookie,
  probeRoutes,
  SANDBOX_INTEGRATOR,
  SANDBOX_UTILITY_API_KEY,
  startGateway,
  startGatewayWithStubs,
  testSigner,
  type GatewayHarness,
  type Stubs,
} from '../services/gateway/test/harness.ts';

const run = await tierAvailable('postgres');

type H = GatewayHarness & { stubs: Stubs };

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.slice(7, token.lastIndexOf('.')), 'base64url').toString()) as { integrator_id: string; site_id: string; exp: number; kid: string; jti: string };

describe.runIf(run)('site tokens', () => {
  let h: H;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes() });
    h.stubs.sites.set(SANDBOX_INTEGRATOR, new Set(['site-a', 'site-b']));
    h.stubs.sites.set('acme-b', new Set(['site-of-b']));
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('POST /v1/auth/site/{siteId} answers {site_access_token, expires_at} for one hour and that one site', async () => {
    const before = Date.now();
    const r = await h.api.post('/v1/auth/site/site-a');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['expires_at', 'site_access_token']);
    expect(r.body.site_access_token).toMatch(/^efs_st_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(r.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(claimsOf(r.body.site_access_token)).toMatchObject({ integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-a' });
    // Commissioning was asked whether the site is the integrator's.
    const ask = h.stubs.calls.filter((c) => c.request.op === 'sites.get').at(-1)!;
    expect(ask.target).toBe('commissioning');
    expect(ask.request.params).toEqual({ siteId: 'site-a' });
    expect(ask.request.principal).toMatchObject({ kind: 'CLIENT', integrator_id: SANDBOX_INTEGRATOR });

    const site = apiClient(h.urls.public, r.body.site_access_token);
    const own = await site.get('/v1/site/site-a/probe');
    expect(own.status).toBe(200);
    expect(own.body.principal).toMatchObject({ kind: 'SITE', integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-a', token_id: claimsOf(r.body.site_access_token).jti });
    expect(await site.get('/v1/site/site-b/probe')).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', status_code: 403 } });
    expect(await site.post('/v1/probe', { name: 'x' })).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect(await site.post('/v1/auth/site/site-a')).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
  });

  it('answers 404 for an unknown site and for another integrator’s site, and 401/403 to other callers', async () => {
    expect(await h.api.post('/v1/auth/site/nowhere')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', status_code: 404 } });
    expect(await h.api.post('/v1/auth/site/site-of-b')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(await h.api.withToken(undefined).post('/v1/auth/site/site-a')).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    expect(await apiClient(h.urls.public, SANDBOX_UTILITY_API_KEY).post('/v1/auth/site/site-a')).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    // Token issuance is not on the utility listener at all.
    expect(await h.utility.post('/v1/auth/site/site-a')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
  });

  it('refuses an expired, tampered or foreign-key site token with 401', async () => {
    const signer = testSigner();
    const expired = signer.sign('site', { integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-a' }, 3600, new Date(Date.now() - 3601_000)).token;
    const r = await apiClient(h.urls.public, expired).get('/v1/site/site-a/probe');
    expect(r).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringContaining('expired') } });
    const good = (await h.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    const c = claimsOf(good);
    const tampered = `efs_st_${Buffer.from(JSON.stringify({ ...c, site_id: 'site-b' })).toString('base64url')}${good.slice(good.lastIndexOf('.'))}`;
    expect((await apiClient(h.urls.public, tampered).get('/v1/site/site-b/probe')).status).toBe(401);
  });
});

describe.runIf(run)('portal session tokens', () => {
  let h: H;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), env: { PORTAL_URL: 'https://portal.example.test/' } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const redeemAt = (portalUrl: string) => `${h.urls.portal}${new URL(portalUrl).pathname}${new URL(portalUrl).search}`;

  it('POST /v1/sessions commissions or reuses the site and answers {token, expires_at, portal_url}', async () => {
    const device = {
      id: 'd1',
      site_id: 'new-site',
      manufacturer_name: 'Acme',
      product_name: 'PowerBox',
      serial_number: 'SN-1',
      type: 'BATTERY',
      attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
      install_date: '2025-06-01T00:00:00Z',
    };
    const body = { site: { id: 'new-site', zip_code: '88801' }, devices: [device] };
    const r = await h.api.post('/v1/sessions', body);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['expires_at', 'portal_url', 'token']);
    expect(r.body.token).toMatch(/^efs_ss_[A-Za-z0-9_-]{43}$/);
    expect(r.body.portal_url).toBe(`https://portal.example.test/auth/session_token?token=${r.body.token}`);
    const ttl = Date.parse(r.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const ensure = h.stubs.calls.filter((c) => c.request.op === 'sites.ensure').at(-1)!;
    expect(ensure.target).toBe('commissioning');
    expect(JSON.parse(ensure.request.body!)).toEqual(body);
    expect(ensure.request.principal).toMatchObject({ kind: 'CLIENT', integrator_id: SANDBOX_INTEGRATOR });
    // Only the hash is kept.
    const rows = await h.db.knex.withSchema('auth').table('session_tokens').select();
    expect(JSON.stringify(rows)).not.toContain(r.body.token);
    expect(rows.some((row: { token_hash: string; site_id: string }) => row.token_hash === hashToken(r.body.token) && row.site_id === 'new-site')).toBe(true);
    // An existing site: id alone is enough.
    expect((await h.api.post('/v1/sessions', { site: { id: 'new-site' } })).status).toBe(200);
  });

  it('is redeemed once at the portal, starting a cookie session bound to that site', async () => {
    const s = await h.api.post('/v1/sessions', { site: { id: 'site-p' } });
    const first = await fetch(redeemAt(s.body.portal_url));
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/html/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await first.text()).toContain('site-p');
    const setCookie = first.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^efs_portal_session=efs_ps_[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=None; Secure$/);
    const session = portalCookie(setCookie)!;
    expect(claimsOf(session)).toMatchObject({ integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-p' });

    const second = await fetch(redeemAt(s.body.portal_url));
    expect(second.status).toBe(401);
    expect(await second.json()).toMatchObject({ code: 'UNAUTHORIZED', status_code: 401 });

    const viaCookie = await fetch(`${h.urls.public}/v1/site/site-p/probe`, { headers: { cookie: `other=1; efs_portal_session=${session}` } });
    expect(viaCookie.status).toBe(200);
    expect(((await viaCookie.json()) as { principal: unknown }).principal).toMatchObject({ kind: 'PORTAL_SESSION', integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-p' });
    expect((await apiClient(h.urls.public, session).get('/v1/site/site-p/probe')).status).toBe(200);
    expect((await apiClient(h.urls.public, session).get('/v1/site/other/probe')).status).toBe(403);
    expect((await apiClient(h.urls.public, session).post('/v1/probe', { name: 'x' })).status).toBe(403);
    // The single-use token itself is no credential.
    expect((await apiClient(h.urls.public, s.body.token).get('/v1/site/site-p/probe')).status).toBe(401);
  });

  it('cannot be redeemed after 10 minutes', async () => {
    const s = await h.api.post('/v1/sessions', { site: { id: 'site-late' } });
    await h.db.knex.withSchema('auth').table('session_tokens').where({ token_hash: hashToken(s.body.token) }).update({ expires_at: h.db.knex.raw("now() - interval '1 second'") });
    expect((await fetch(redeemAt(s.body.portal_url))).status).toBe(401);
  });

  it('passes on commissioning’s refusal and makes no token then; validates the body; takes only client tokens', async () => {
    const count = async () => Number(((await h.db.knex.withSchema('auth').table('session_tokens').count({ n: '*' })) as [{ n: string }])[0].n);
    const before = await count();
    const r = await h.api.post('/v1/sessions', { site: { id: 'conflict-1' } });
    expect(r).toMatchObject({ status: 409, body: { code: 'CONFLICT', status_code: 409 } });
    expect(await count()).toBe(before);
    const invalid = await h.api.post('/v1/sessions', { site: {} });
    expect(invalid).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR' } });
    expect(invalid.body.detail[0].loc).toEqual(['body', 'site', 'id']);
    // The same schema as commissioning's: a bad device is refused at the edge.
    const badDevice = await h.api.post('/v1/sessions', { site: { id: 's1' }, devices: [{ id: 'd1', site_id: 's1', type: 'TOASTER' }] });
    expect(badDevice).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR' } });
    expect(await count()).toBe(before);
    const site = (await h.api.post('/v1/auth/site/new-site')).body.site_access_token as string;
    expect((await apiClient(h.urls.public, site).post('/v1/sessions', { site: { id: 'new-site' } })).status).toBe(403);
  });
});

describe.runIf(run)('two gateway replicas on one database and one transport', () => {
  const logger = createLogger({ name: 'test', level: 'silent' });
  let transport: InProcessTransport;
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let a: GatewayHarness;
  let b: GatewayHarness;
  let stubs: Stubs;
  const env = { SITE_TOKEN_SIGNING_KEYS: '', SIGNING_KEYS_REFRESH_MS: '200' };

  beforeAll(async () => {
    database = await createTestDb();
    transport = new InProcessTransport({ logger });
    await transport.start();
    stubs = await installStubServices(transport);
    stubs.sites.set(SANDBOX_INTEGRATOR, new Set(['site-a']));
    a = await startGateway({ database, transport, routes: probeRoutes(), env: { ...env, GATEWAY_INSTANCE_ID: 'replica-a' } });
    b = await startGateway({ database, transport, routes: probeRoutes(), env: { ...env, GATEWAY_INSTANCE_ID: 'replica-b' } });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await transport?.stop();
    await database?.drop();
  });

  const cli = async (...args: string[]) => {
    const out: string[] = [];
    const code = await credentialCommand(args[0] as 'client-token', args[1], args.slice(2), { DATABASE_URL: database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) });
    return { code, text: out.join('\n') };
  };

  it('a client token created and revoked with the CLI works on, then stops working on, the other replica within seconds', async () => {
    const created = await cli('client-token', 'create', '--integrator', 'acme', '--name', 'Acme');
    expect(created.code).toBe(0);
    const token = /token: (efs_ct_\S+)/.exec(created.text)![1]!;
    const id = /id: (\S+)/.exec(created.text)![1]!;
    const row = await a.db.knex.withSchema('auth').table('client_tokens').where({ id }).first();
    expect(row.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token);

    // Published by a running gateway's outbox relay (the CLI has no broker here); every replica consumes it.
    await waitFor(async () => (await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status === 200, { timeoutMs: 5000, what: 'new token on replica b' });
    expect((await a.api.withToken(token).post('/v1/probe', { name: 'x' })).body.principal).toMatchObject({ kind: 'CLIENT', integrator_id: 'acme', token_id: id });

    // Authenticating reads memory only: 100 requests with a client token and a site token query no
    // credential table; the only database reads are the periodic key refresh and outbox relay.
    const site = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    const queries: string[] = [];
    const record = (q: { sql: string }) => queries.push(q.sql);
    b.db.knex.on('query', record);
    for (let i = 0; i < 50; i++) {
      expect((await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status).toBe(200);
      expect((await apiClient(b.urls.public, site).get('/v1/site/site-a/probe')).status).toBe(200);
    }
    b.db.knex.removeListener('query', record);
    expect(queries.filter((q) => /client_tokens|utility_keys|session_tokens|integrators/.test(q))).toEqual([]);
    expect(queries.filter((q) => /signing_keys/.test(q)).length).toBeLessThan(15);

    // What this client token issued: a site token, a portal session, a session token not yet redeemed.
    stubs.sites.set('acme', new Set(['acme-site']));
    const issuedSite = (await a.api.withToken(token).post('/v1/auth/site/acme-site')).body.site_access_token as string;
    const redeemedSession = await a.api.withToken(token).post('/v1/sessions', { site: { id: 'acme-site' } });
    const portal = portalCookie((await fetch(`${a.urls.portal}/auth/session_token?token=${redeemedSession.body.token}`)).headers.get('set-cookie'))!;
    const pending = (await a.api.withToken(token).post('/v1/sessions', { site: { id: 'acme-site' } })).body.token as string;
    expect((await apiClient(b.urls.public, issuedSite).get('/v1/site/acme-site/probe')).status).toBe(200);
    expect((await apiClient(b.urls.public, portal).get('/v1/site/acme-site/probe')).status).toBe(200);

    const revokedAt = Date.now();
    const revoked = await cli('client-token', 'revoke', id);
    expect(revoked).toMatchObject({ code: 0, text: expect.stringContaining(`revoked ${id}`) });
    await waitFor(async () => (await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status === 401, { timeoutMs: 5000, intervalMs: 20, what: 'revocation on replica b' });
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    expect(await a.api.withToken(token).post('/v1/probe', { name: 'x' })).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringContaining('revoked') } });
    expect((await cli('client-token', 'revoke', id)).code).toBe(1);
    // Revoking a client token ends what it issued, on every replica, still without a lookup.
    for (const gw of [a, b]) {
      expect(await apiClient(gw.urls.public, issuedSite).get('/v1/site/acme-site/probe')).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringContaining('revoked') } });
      expect((await apiClient(gw.urls.public, portal).get('/v1/site/acme-site/probe')).status).toBe(401);
    }
    expect((await fetch(`${b.urls.portal}/auth/session_token?token=${pending}`)).status).toBe(401);
    expect((await apiClient(b.urls.public, site).get('/v1/site/site-a/probe')).status).toBe(200);
    // Other tokens are untouched.
    expect((await b.api.post('/v1/probe', { name: 'x' })).status).toBe(200);
  });

  it('a revoked utility key stops working on both replicas too', async () => {
    const created = await cli('utility-key', 'create', '--utility', 'grid-co');
    const key = /token: (efs_uk_\S+)/.exec(created.text)![1]!;
    const id = /id: (\S+)/.exec(created.text)![1]!;
    await waitFor(async () => (await b.utility.withToken(key).get('/v1/probe')).status === 200, { timeoutMs: 5000, what: 'utility key on b' });
    expect((await b.utility.withToken(key).get('/v1/probe')).body.principal).toMatchObject({ kind: 'UTILITY', utility_id: 'grid-co', integrator_id: null });
    await cli('utility-key', 'revoke', id);
    await waitFor(async () => (await a.utility.withToken(key).get('/v1/probe')).status === 401 && (await b.utility.withToken(key).get('/v1/probe')).status === 401, {
      timeoutMs: 5000,
      what: 'utility key revoked on both',
    });
  });

  it('a replica that starts after a revocation knows it', async () => {
    const created = await a.store.createClientToken(SANDBOX_INTEGRATOR, 'late');
    await a.store.revokeClientToken(created.id);
    const c = await startGateway({ database, transport, routes: probeRoutes(), env: { ...env, GATEWAY_INSTANCE_ID: 'replica-c' } });
    try {
      expect((await c.api.withToken(created.token).post('/v1/probe', { name: 'x' })).status).toBe(401);
      expect((await c.api.post('/v1/probe', { name: 'x' })).status).toBe(200);
    } finally {
      await c.stop();
    }
  });

  it('site tokens verify on every replica, and a signing-key rotation invalidates no token in its hour', async () => {
    const before = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    expect((await apiClient(b.urls.public, before).get('/v1/site/site-a/probe')).status).toBe(200);
    const oldKid = claimsOf(before).kid;

    const rotated = await rotateSigningKey(a.db.knex, 'auth', { activationDelayMs: 300, keepMs: 3600_000 });
    expect(rotated.deleted).toEqual([]);
    const after = await waitFor(
      async () => {
        const t = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
        return claimsOf(t).kid === rotated.kid ? t : undefined;
      },
      { timeoutMs: 5000, what: 'replica a signing with the new key' },
    );
    expect(claimsOf(after).kid).not.toBe(oldKid);
    for (const gw of [a, b]) {
      expect((await apiClient(gw.urls.public, after).get('/v1/site/site-a/probe')).status).toBe(200);
      expect((await apiClient(gw.urls.public, before).get('/v1/site/site-a/probe')).status).toBe(200);
    }

    // Once the old key's tokens could all have expired, the next rotation deletes it, and replicas forget it.
    await new Promise((r) => setTimeout(r, 5)); // (keepMs below is 1 ms)
    const second = await rotateSigningKey(a.db.knex, 'auth', { activationDelayMs: 0, keepMs: 1 });
    expect(second.deleted).toEqual([oldKid]);
    await waitFor(async () => (await apiClient(b.urls.public, before).get('/v1/site/site-a/probe')).status === 401, { timeoutMs: 5000, what: 'old key dropped' });
    expect((await apiClient(b.urls.public, after).get('/v1/site/site-a/probe')).status).toBe(200);
  });
});
