/**
 * Tenant isolation through the whole system (real commissioning behind the gateway): two
 * integrators with a site of the same id never see each other's data, whatever token they hold;
 * site tokens and portal sessions work end to end on real sites.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { credentialCommand } from '@efs/cli';
import { authRoutes } from '../services/gateway/src/routes/auth.ts';
import { allRoutes } from '../services/gateway/src/routes/index.ts';
import { redeemPortalSession } from '../services/gateway/test/harness.ts';
import { battery, expectError, fullSite, siteToken, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('tenant isolation and tokens on real sites', () => {
  const t = useTestSystem();
  let b: ApiClient;
  const shared = uid('home');
  const onlyA = uid('a-only');
  const onlyB = uid('b-only');

  const commission = async (client: ApiClient, siteId: string, firstName: string) => {
    const r = await client.post('/v1/commission', { site: fullSite(siteId, { first_name: firstName }), devices: [battery(siteId, `${siteId}-bat`)], can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };

  beforeAll(async () => {
    // Integrator B's client token, made with the CLI against the running system's database.
    const out: string[] = [];
    expect(await credentialCommand('client-token', 'create', ['--integrator', 'integrator-b'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    b = apiClient(t.urls.public, /token: (efs_ct_\S+)/.exec(out.join('\n'))![1]);
    await waitFor(async () => (await b.get('/v1/sites')).status === 200, { timeoutMs: 5000, what: "integrator B's token" });
    await commission(t.api, shared, 'Ada');
    await commission(b, shared, 'Grace');
    await commission(t.api, onlyA, 'Ada');
    await commission(b, onlyB, 'Grace');
  });

  it('issues a site token only for the integrator’s own site (404 for another’s or an unknown one)', async () => {
    expectError(await t.api.post(`/v1/auth/site/${onlyB}`), 404, 'NOT_FOUND');
    expectError(await b.post(`/v1/auth/site/${onlyA}`), 404, 'NOT_FOUND');
    expectError(await t.api.post(`/v1/auth/site/${uid('nowhere')}`), 404, 'NOT_FOUND');
  });

  it('takes a body-less POST and DELETE sent with Content-Type: application/json, as many clients send them', async () => {
    const json = { 'content-type': 'application/json' };
    const issued = await t.api.post(`/v1/auth/site/${onlyA}`, undefined, json);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.site_access_token).toMatch(/^efs_st_/);
    const site = apiClient(t.urls.public, issued.body.site_access_token);
    const gone = await site.delete(`/v1/site/${onlyA}/device/${onlyA}-bat`, json);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
  });

  it('a site token of a shared site id reads its own integrator’s site, never the other’s', async () => {
    const a = apiClient(t.urls.public, await siteToken(t, shared));
    const bb = apiClient(t.urls.public, await siteToken(t, shared, b));
    expect((await a.get(`/v1/site/${shared}`)).body.first_name).toBe('Ada');
    expect((await bb.get(`/v1/site/${shared}`)).body.first_name).toBe('Grace');
    expect((await bb.get(`/v1/site/${shared}/devices`)).body.map((d: { id: string }) => d.id)).toEqual([`${shared}-bat`]);
    expectError(await a.get(`/v1/site/${onlyA}`), 403, 'FORBIDDEN');
  });

  it('another integrator’s client token answers 404 on every site route that takes client tokens', async () => {
    const routes = allRoutes.filter((r) => r.listener === 'public' && r.url.includes(':siteId') && r.auth.accepts.includes('client') && !authRoutes.includes(r));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) {
      const path = r.url.replace(':siteId', onlyA).replace(/:[A-Za-z]+/g, `${onlyA}-bat`);
      const body = r.method === 'POST' ? battery(onlyA, uid('dev')) : undefined;
      expectError(await b[r.method.toLowerCase() as 'post'](path, body), 404, 'NOT_FOUND');
    }
    // The owner succeeds on the same request.
    expect((await t.api.post(`/v1/site/${onlyA}/devices`, battery(onlyA, uid('dev')))).status).toBe(200);
  });

  it('a portal session commissions a new site, reuses it, and opens exactly that site', async () => {
    const siteId = uid('portal');
    const s = await t.api.post('/v1/sessions', { site: fullSite(siteId), devices: [battery(siteId, `${siteId}-bat`)] });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect((await t.api.get('/v1/sites?limit=1000')).body.map((x: { id: string }) => x.id)).toContain(siteId);
    expect((await t.api.post('/v1/sessions', { site: { id: siteId } })).status).toBe(200);
    const redeemed = await redeemPortalSession(t.urls.portal, s.body.token);
    expect(redeemed.status).toBe(200);
    const session = apiClient(t.urls.public, redeemed.body.session);
    const site = await session.get(`/v1/site/${siteId}`);
    expect(site.status).toBe(200);
    expect(site.body.id).toBe(siteId);
    expectError(await session.get(`/v1/site/${onlyA}`), 403, 'FORBIDDEN');
    expectError(await session.get('/v1/sites'), 403, 'FORBIDDEN');
  });
});
