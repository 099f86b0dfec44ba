/**
 * Every registered route × every kind of credential: the scope rule each route declares
 * (RouteDef.auth.accepts) is what the gateway enforces. A route added later with a wrong or
 * missing rule, or one the gateway forgets to guard, fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor, type ApiResponse } from '@efs/testing';
import type { TokenKindName } from '../src/auth/authenticate.ts';
import { SignedTokens } from '../src/auth/signedTokens.ts';
import { StaticKeyring } from '../src/auth/signingKeys.ts';
import { allRoutes } from '../src/routes/index.ts';
import type { RouteDef } from '../src/routes/route.ts';
import { HOUR_LIFETIMES, redeemPortalSession, SANDBOX_CLIENT_TOKEN, SANDBOX_INTEGRATOR, SANDBOX_UTILITY_API_KEY, startGatewayWithStubs, testSigner, type StubbedGateway } from './harness.ts';

const run = await tierAvailable('postgres');

const SITE = 'site-a';
const OTHER_SITE = 'site-b';
const OTHER_INTEGRATOR = 'acme-b';

type Expect = 401 | 403 | 'pass';

interface Credential {
  name: string;
  /** Authorization header value, or undefined for none. */
  header: string | undefined;
  /** What a route with these accepted kinds must answer. */
  expect(route: RouteDef): Expect;
  /** For a passing request that reached a service: the principal it must have carried. */
  principal?: { kind: string; integrator_id: string | null; utility_id: string | null; site_id: string | null };
}

const hasSiteParam = (r: RouteDef) => /:siteId(\/|$)/.test(r.url);
const byKind = (kind: TokenKindName, siteOf?: string) => (r: RouteDef): Expect => {
  if (!r.auth.accepts.includes(kind)) return 403;
  if (siteOf !== undefined && hasSiteParam(r) && siteOf !== SITE) return 403;
  return 'pass';
};

/** The route's path with its parameters filled in: the site under test, plausible ids elsewhere. */
const pathOf = (r: RouteDef) => r.url.replace(':siteId', SITE).replace(/:[A-Za-z]+/g, '00000000-0000-4000-8000-000000000001');

describe.runIf(run)('scope rules of every route × every credential', () => {
  let h: StubbedGateway;
  const credentials: Credential[] = [];

  beforeAll(async () => {
    h = await startGatewayWithStubs({ env: { RATE_LIMIT_CLIENT: '100000', RATE_LIMIT_SITE: '100000', RATE_LIMIT_SESSION: '100000', RATE_LIMIT_UTILITY: '100000' }, sandboxSites: [SITE, OTHER_SITE] });
    const signer = testSigner();
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);

    const siteToken = async (siteId: string) => {
      const r = await h.api.post(`/v1/auth/site/${siteId}`);
      expect(r.status).toBe(200);
      return r.body.site_access_token as string;
    };
    const portalSession = async (siteId: string) => {
      const s = await h.api.post('/v1/sessions', { site: { id: siteId } });
      expect(s.status).toBe(200);
      const redeemed = await redeemPortalSession(h.urls.portal, s.body.token);
      expect(redeemed.status).toBe(200);
      return redeemed.body.session as string;
    };
    const oneTimeSession = (await h.api.post('/v1/sessions', { site: { id: SITE } })).body.token as string;

    await h.store.ensureIntegrator(OTHER_INTEGRATOR, 'Acme B');
    const other = await h.store.createClientToken(OTHER_INTEGRATOR, 'matrix');
    const revoked = await h.store.createClientToken(SANDBOX_INTEGRATOR, 'to be revoked');
    await h.gateway.flushCredentials();
    const publicApi = apiClient(h.urls.public);
    await waitFor(async () => (await publicApi.withToken(other.token).get('/v1/programs')).status === 200, { what: 'new client token known' });
    await waitFor(async () => (await publicApi.withToken(revoked.token).post(`/v1/auth/site/${SITE}`)).status === 200, { what: 'token to revoke known' });
    const issuedByRevoked = (await publicApi.withToken(revoked.token).post(`/v1/auth/site/${SITE}`)).body.site_access_token as string;
    await h.store.revokeClientToken(revoked.id);
    await h.gateway.flushCredentials();
    await waitFor(async () => (await publicApi.withToken(revoked.token).get('/v1/programs')).status === 401, { what: 'revocation known' });

    const bearer = (t: string) => `Bearer ${t}`;
    const unauthorized = () => 401 as const;
    credentials.push(
      { name: 'no token', header: undefined, expect: unauthorized },
      { name: 'garbage bearer', header: 'Bearer not-a-token', expect: unauthorized },
      { name: 'malformed Authorization', header: `Token ${SANDBOX_CLIENT_TOKEN}`, expect: unauthorized },
      { name: 'unknown client token', header: bearer('efs_ct_unknownunknownunknownunknownunknownxxx'), expect: unauthorized },
      { name: 'revoked client token', header: bearer(revoked.token), expect: unauthorized },
      { name: 'site token issued by a since revoked client token', header: bearer(issuedByRevoked), expect: unauthorized },
      { name: 'expired site token', header: bearer(signer.sign('site', { integrator_id: SANDBOX_INTEGRATOR, site_id: SITE }, 3600, twoHoursAgo).token), expect: unauthorized },
      { name: 'expired portal session', header: bearer(signer.sign('portalSession', { integrator_id: SANDBOX_INTEGRATOR, site_id: SITE }, 3600, twoHoursAgo).token), expect: unauthorized },
      // Validly signed with the gateway's own key, but for longer than the kind's lifetime.
      { name: 'site token signed for a year', header: bearer(signer.sign('site', { integrator_id: SANDBOX_INTEGRATOR, site_id: SITE }, 365 * 86400).token), expect: unauthorized },
      { name: 'portal session signed for two hours', header: bearer(signer.sign('portalSession', { integrator_id: SANDBOX_INTEGRATOR, site_id: SITE }, 7200).token), expect: unauthorized },
      {
        name: 'site token signed with an unknown key',
        header: bearer(new SignedTokens(StaticKeyring.parse('rogue:rogue-secret-rogue-secret-rogue-secret-00'), HOUR_LIFETIMES).sign('site', { integrator_id: SANDBOX_INTEGRATOR, site_id: SITE }, 3600).token),
        expect: unauthorized,
      },
      { name: 'single-use session token as bearer', header: bearer(oneTimeSession), expect: unauthorized },
      {
        name: 'client token',
        header: bearer(SANDBOX_CLIENT_TOKEN),
        expect: byKind('client'),
        principal: { kind: 'CLIENT', integrator_id: SANDBOX_INTEGRATOR, utility_id: null, site_id: null },
      },
      {
        name: "another integrator's client token",
        header: bearer(other.token),
        expect: byKind('client'),
        principal: { kind: 'CLIENT', integrator_id: OTHER_INTEGRATOR, utility_id: null, site_id: null },
      },
      {
        name: 'site token of the site',
        header: bearer(await siteToken(SITE)),
        expect: byKind('site', SITE),
        principal: { kind: 'SITE', integrator_id: SANDBOX_INTEGRATOR, utility_id: null, site_id: SITE },
      },
      { name: 'site token of another site', header: bearer(await siteToken(OTHER_SITE)), expect: byKind('site', OTHER_SITE) },
      {
        name: 'portal session of the site',
        header: bearer(await portalSession(SITE)),
        expect: byKind('portalSession', SITE),
        principal: { kind: 'PORTAL_SESSION', integrator_id: SANDBOX_INTEGRATOR, utility_id: null, site_id: SITE },
      },
      { name: 'portal session of another site', header: bearer(await portalSession(OTHER_SITE)), expect: byKind('portalSession', OTHER_SITE) },
      {
        name: 'utility API key',
        header: bearer(SANDBOX_UTILITY_API_KEY),
        expect: byKind('utility'),
        principal: { kind: 'UTILITY', integrator_id: null, utility_id: 'sandbox-utility', site_id: null },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('has routes on both API listeners, each accepting at least one token kind', () => {
    expect(allRoutes.length).toBeGreaterThan(0);
    for (const r of allRoutes) expect(r.auth.accepts.length, `${r.method} ${r.url}`).toBeGreaterThan(0);
  });

  it('answers 401, 403 or lets the request through, exactly as each route declares', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of allRoutes) {
      const base = route.listener === 'utility' ? h.urls.utility : h.urls.public;
      for (const c of credentials) {
        const expected = c.expect(route);
        const headers: Record<string, string> = c.header ? { authorization: c.header } : {};
        const res = await fetch(base + pathOf(route), { method: route.method, headers });
        const r: ApiResponse = { status: res.status, headers: res.headers, body: await res.json().catch(() => undefined) };
        checked++;
        const label = `${route.method} ${route.url} with ${c.name}: expected ${expected}, got ${r.status} ${JSON.stringify(r.body)?.slice(0, 160)}`;
        if (expected === 401 || expected === 403) {
          const code = expected === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN';
          if (r.status !== expected || r.body?.code !== code || r.body?.status_code !== expected || !Array.isArray(r.body?.detail) || !Array.isArray(r.body?.errors)) failures.push(label);
          continue;
        }
        if (r.status === 401 || r.status === 403) {
          failures.push(label);
          continue;
        }
        // Passed authentication: the per-token rate-limit headers say so, and a service that got the request saw this principal.
        if (!r.headers.get('ratelimit-policy')) failures.push(`${label} (no RateLimit-Policy)`);
        if (r.status === 200 && r.body?.stub && c.principal) {
          const p = r.body.principal;
          if (p.kind !== c.principal.kind || p.integrator_id !== c.principal.integrator_id || p.utility_id !== c.principal.utility_id || p.site_id !== c.principal.site_id || !p.token_id) {
            failures.push(`${label} (principal ${JSON.stringify(p)})`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBe(allRoutes.length * credentials.length);
    // Every route × every credential, one request at a time: over 2,000 requests on a busy machine.
  }, 120_000);

  it('authenticates before it validates: a bad body answers 401 or 403 to the wrong caller, 400 to the right one', async () => {
    const send = (token: string | undefined) =>
      fetch(`${h.urls.public}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: '{"site": ' });
    expect((await send(undefined)).status).toBe(401);
    const site = (await h.api.post(`/v1/auth/site/${SITE}`)).body.site_access_token as string;
    expect((await send(site)).status).toBe(403);
    const ok = await send(SANDBOX_CLIENT_TOKEN);
    expect(ok.status).toBe(400);
    expect(await ok.json()).toMatchObject({ code: 'VALIDATION_ERROR', status_code: 400 });
  });

  it('never takes a credential from a cookie: a portal session, a client token or a malformed value in efs_portal_session is a 401 with the error body', async () => {
    const sessionRoutes = allRoutes.filter((r) => r.auth.accepts.includes('portalSession') && r.method === 'GET' && hasSiteParam(r));
    expect(sessionRoutes.length).toBeGreaterThan(0);
    const session = credentials.find((c) => c.name === 'portal session of the site')!.header!.slice('Bearer '.length);
    const clientRoute = allRoutes.find((r) => r.url === '/v1/programs' && r.listener === 'public')!;
    const probes = [
      ...sessionRoutes.map((route) => ({ route, cookie: `efs_portal_session=${session}` })),
      { route: clientRoute, cookie: `efs_portal_session=${SANDBOX_CLIENT_TOKEN}` },
      ...[sessionRoutes[0]!, clientRoute].flatMap((route) => ['efs_portal_session=efs_ps_%%%garbage', 'efs_portal_session=%E0%A4%A', 'efs_portal_session="', '=;;efs_portal_session'].map((cookie) => ({ route, cookie }))),
    ];
    for (const { route, cookie } of probes) {
      const base = route.listener === 'utility' ? h.urls.utility : h.urls.public;
      const r = await fetch(base + pathOf(route), { headers: { cookie } });
      expect(r.status, `${route.url} with ${cookie}`).toBe(401);
      expect(await r.json()).toMatchObject({ code: 'UNAUTHORIZED', status_code: 401 });
    }
  });
});
