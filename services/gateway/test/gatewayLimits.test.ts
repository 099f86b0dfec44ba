/**
 * Per-token rate limits (decisions.md, Limits): 429 RATE_LIMITED with Retry-After and the IETF
 * draft's RateLimit-Policy / RateLimit headers, a token's burst never touching other tokens, and
 * the per-replica division of GATEWAY_REPLICAS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable } from '@efs/testing';
import { ProbeOperations, probeRoutes, startGatewayWithStubs, type StubbedGateway } from './harness.ts';

const run = await tierAvailable('postgres');

async function siteToken(h: StubbedGateway, siteId: string): Promise<string> {
  const r = await h.api.post(`/v1/auth/site/${siteId}`);
  expect(r.status).toBe(200);
  return r.body.site_access_token;
}

describe.runIf(run)('rate limits with the default limits', () => {
  let h: StubbedGateway;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), sandboxSites: ['site-a'] });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('a burst of 1,000 requests on one site token: 120 answered, 880 refused with 429 and the headers, nothing else affected', { timeout: 90_000 }, async () => {
    const token = await siteToken(h, 'site-a');
    const before = h.stubs.calls.filter((c) => c.request.op === ProbeOperations.siteProbe.name).length;
    const results: { status: number; headers: Headers; body: any }[] = [];
    // 1,000 requests, 100 in flight at a time.
    for (let batch = 0; batch < 10; batch++) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, async () => {
            const r = await fetch(`${h.urls.public}/v1/site/site-a/probe`, { headers: { authorization: `Bearer ${token}` } });
            return { status: r.status, headers: r.headers, body: await r.json() };
          }),
        )),
      );
    }
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(120);
    expect(limited).toHaveLength(880);
    for (const r of ok) expect(r.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
    for (const r of limited) {
      expect(r.body).toEqual({ code: 'RATE_LIMITED', message: expect.stringContaining('120'), status_code: 429, detail: [], errors: [] });
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(r.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
      expect(r.headers.get('ratelimit')).toBe(`"default";r=0;t=${retryAfter}`);
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    // Remaining counts down to zero over the answered requests.
    const remaining = ok.map((r) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => i));
    // Refused requests never reached a service.
    expect(h.stubs.calls.filter((c) => c.request.op === ProbeOperations.siteProbe.name).length - before).toBe(120);

    // Nothing else breaks: another site token, the client token, health.
    const second = apiClient(h.urls.public, await siteToken(h, 'site-a'));
    expect((await second.get('/v1/site/site-a/probe')).status).toBe(200);
    const client = await h.api.post('/v1/probe', { name: 'x' });
    expect(client.status).toBe(200);
    expect(client.headers.get('ratelimit-policy')).toBe('"default";q=1200;w=60');
    expect((await apiClient(h.urls.public).get('/healthz')).status).toBe(200);
    expect((await apiClient(h.urls.public).get('/readyz')).status).toBe(200);
    // And the limited token is still refused (not reset by others' traffic).
    expect((await apiClient(h.urls.public, token).get('/v1/site/site-a/probe')).status).toBe(429);
  });

  it('announces the default policy of each token kind', async () => {
    expect((await h.utility.get('/v1/probe')).headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    expect((await h.api.post('/v1/probe', { name: 'x' })).headers.get('ratelimit-policy')).toBe('"default";q=1200;w=60');
  });

  it('counts nothing for a request that fails authentication', async () => {
    const r = await apiClient(h.urls.public, 'efs_st_bogus.bogus').get('/v1/site/site-a/probe');
    expect(r.status).toBe(401);
    expect(r.headers.get('ratelimit')).toBeNull();
  });
});

describe.runIf(run)('rate limits configured, shared by division among replicas', () => {
  let h: StubbedGateway;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), env: { RATE_LIMIT_UTILITY: '20', RATE_LIMIT_CLIENT: '7', GATEWAY_REPLICAS: '2' } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('allows limit / GATEWAY_REPLICAS per replica and announces the whole limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await h.utility.get('/v1/probe')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const last = await h.utility.get('/v1/probe');
    expect(last.headers.get('ratelimit-policy')).toBe('"default";q=20;w=60');
    expect(last.body.code).toBe('RATE_LIMITED');
  });

  it('rounds a per-replica share up (7 over 2 replicas: 4 each)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await h.api.post('/v1/probe', { name: 'x' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});

describe.runIf(run)('the portal routes that take no credential, limited per client address', () => {
  let h: StubbedGateway;
  let proxied: StubbedGateway;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), env: { RATE_LIMIT_PORTAL_ADDRESS: '5' } });
    proxied = await startGatewayWithStubs({ routes: probeRoutes(), env: { RATE_LIMIT_PORTAL_ADDRESS: '3', TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await h?.stop();
    await proxied?.stop();
  });

  it('counts the link check, the redemption and the branding style sheet of one address together: 429 with the headers past the limit', async () => {
    const origin = new URL(h.urls.portal).origin;
    const calls = [
      () => fetch(`${origin}/auth/session_token?token=efs_ss_guess1`),
      () => fetch(`${origin}/auth/session_token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'efs_ss_guess2' }) }),
      () => fetch(`${origin}/branding/acme/theme.css`),
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await calls[i % calls.length]!();
      statuses.push(r.status);
      expect(r.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
      if (r.status === 429) {
        expect(await r.json()).toMatchObject({ code: 'RATE_LIMITED', status_code: 429 });
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 200, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    // The portal's assets and the APIs are not counted per address.
    expect((await fetch(`${h.urls.public}/healthz`)).status).toBe(200);
    expect((await h.api.post('/v1/probe', { name: 'x' })).status).toBe(200);
  });

  it('behind a trusted proxy, counts each client address the proxy names apart', async () => {
    const origin = new URL(proxied.urls.portal).origin;
    const from = (address: string) => fetch(`${origin}/branding/acme/theme.css`, { headers: { 'x-forwarded-for': address } });
    const a = [];
    for (let i = 0; i < 4; i++) a.push((await from('203.0.113.7')).status);
    expect(a).toEqual([200, 200, 200, 429]);
    expect((await from('203.0.113.8')).status).toBe(200);
  });
});
