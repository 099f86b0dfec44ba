/**
 * Token kinds end to end through the gateway: site tokens (issued for the integrator's own site
 * only, one hour, one site) and single-use portal session tokens and the portal session they
 * start. Replicas, revocation and key rotation: test/gatewayReplicas.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommissioningOperations } from '@efs/api';
import { apiClient, tierAvailable } from '@efs/testing';
import { hashToken } from '../src/auth/tokens.ts';
import {
  claimsOf,
  redeemPortalSession,
  probeRoutes,
  SANDBOX_INTEGRATOR,
  SANDBOX_UTILITY_API_KEY,
  startGatewayWithStubs,
  testSigner,
  type StubbedGateway,
} from './harness.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('site tokens', () => {
  let h: StubbedGateway;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), sandboxSites: ['site-a', 'site-b'] });
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
    const ask = h.stubs.calls.filter((c) => c.request.op === CommissioningOperations.getSite.name).at(-1)!;
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
  let h: StubbedGateway;
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
    const ensure = h.stubs.calls.filter((c) => c.request.op === CommissioningOperations.ensureSite.name).at(-1)!;
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

  it('opens the portal page without spending the token; the page redeems it once into a bearer session bound to that site', async () => {
    const s = await h.api.post('/v1/sessions', { site: { id: 'site-p' } });
    const page = await fetch(redeemAt(s.body.portal_url), { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    // No cookie: inside a cross-site iframe with third-party cookies blocked it would never come back.
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(await page.text()).toContain('<div id="app">');

    const first = await redeemPortalSession(h.urls.portal, s.body.token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['expires_at', 'session', 'site_id']);
    expect(first.body.site_id).toBe('site-p');
    const session = first.body.session as string;
    expect(session).toMatch(/^efs_ps_/);
    expect(claimsOf(session)).toMatchObject({ integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-p' });
    const ttl = Date.parse(first.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    const second = await redeemPortalSession(h.urls.portal, s.body.token);
    expect(second).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', status_code: 401 } });
    // The page of a used link says so: a page for a person, the error body for an API client.
    const usedPage = await fetch(redeemAt(s.body.portal_url), { headers: { accept: 'text/html' } });
    expect(usedPage.status).toBe(401);
    expect(usedPage.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await usedPage.text()).toContain('already been used');
    const usedApi = await fetch(redeemAt(s.body.portal_url));
    expect(usedApi.status).toBe(401);
    expect(await usedApi.json()).toMatchObject({ code: 'UNAUTHORIZED', status_code: 401 });

    // The session is a bearer token only: the same value in a cookie is no credential.
    const viaCookie = await fetch(`${h.urls.public}/v1/site/site-p/probe`, { headers: { cookie: `other=1; efs_portal_session=${session}` } });
    expect(viaCookie.status).toBe(401);
    expect(((await apiClient(h.urls.public, session).get('/v1/site/site-p/probe')).body as { principal: unknown }).principal).toMatchObject({ kind: 'PORTAL_SESSION', integrator_id: SANDBOX_INTEGRATOR, site_id: 'site-p' });
    expect((await apiClient(h.urls.public, session).get('/v1/site/site-p/probe')).status).toBe(200);
    expect((await apiClient(h.urls.public, session).get('/v1/site/other/probe')).status).toBe(403);
    expect((await apiClient(h.urls.public, session).post('/v1/probe', { name: 'x' })).status).toBe(403);
    // The single-use token itself is no credential.
    expect((await apiClient(h.urls.public, s.body.token).get('/v1/site/site-p/probe')).status).toBe(401);
  });

  it('redeems a session token once whatever Idempotency-Key comes with it, and never scopes an anonymous key to another caller', async () => {
    const redeem = async (token: string, key: string) => {
      const r = await fetch(`${new URL(h.urls.portal).origin}/auth/session_token`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ token }) });
      return { status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as { session?: string; code?: string } };
    };
    const s = await h.api.post('/v1/sessions', { site: { id: 'site-key' } });
    const first = await redeem(s.body.token, 'same-key');
    expect(first.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const again = await redeem(s.body.token, 'same-key');
      expect(again).toMatchObject({ status: 401, replayed: null, body: { code: 'UNAUTHORIZED' } });
      expect(JSON.stringify(again.body)).not.toContain(first.body.session!);
    }
    // Another caller's redemption with the same key is its own request: no 409, no replay of the first.
    const other = await h.api.post('/v1/sessions', { site: { id: 'site-key' } });
    const second = await redeem(other.body.token, 'same-key');
    expect(second.status).toBe(200);
    expect(second.replayed).toBeNull();
    expect(second.body.session).not.toBe(first.body.session);
  });

  it('cannot be redeemed after 10 minutes', async () => {
    const s = await h.api.post('/v1/sessions', { site: { id: 'site-late' } });
    await h.db.knex.withSchema('auth').table('session_tokens').where({ token_hash: hashToken(s.body.token) }).update({ expires_at: h.db.knex.raw("now() - interval '1 second'") });
    expect((await fetch(redeemAt(s.body.portal_url))).status).toBe(401);
    expect((await redeemPortalSession(h.urls.portal, s.body.token)).status).toBe(401);
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
