/**
 * Every failure on every listener answers the specification's error body
 * {code, message, status_code, detail, errors}: Fastify's own 404, 405, malformed JSON, 413, 415,
 * malformed HTTP, slow services (503), and the gateway's mechanics around them: request ids,
 * redacted access logs, graceful shutdown.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable } from '@efs/testing';
import {
  capturingLogger,
  expectErrorBody,
  raw,
  ProbeOperations,
  redeemPortalSession,
  probeRoutes,
  SANDBOX_CLIENT_TOKEN,
  SANDBOX_UTILITY_API_KEY,
  startGatewayWithStubs,
  type StubbedGateway,
} from './harness.ts';

const run = await tierAvailable('postgres');

/** Sends bytes that are not HTTP and returns what the server wrote back. */
function sendGarbage(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
  });
}

describe.runIf(run)('error bodies on all three listeners', () => {
  let h: StubbedGateway;
  const logs = capturingLogger('info');
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), env: { REQUEST_TIMEOUT_MS: '300' }, slowMs: 1500, logger: logs.logger, sandboxSites: ['site-a'] });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const listeners = () => [
    { name: 'public', url: h.urls.public, token: SANDBOX_CLIENT_TOKEN },
    { name: 'utility', url: h.urls.utility, token: SANDBOX_UTILITY_API_KEY },
    { name: 'portal', url: h.urls.portal, token: undefined },
  ];

  it('404 for an unknown path, on every listener', async () => {
    for (const l of listeners()) {
      const r = await raw(`${l.url}/v1/nothing/here?x=1`, 'GET');
      expectErrorBody(r, 404, 'NOT_FOUND');
      expect(r.body.message).toContain('/v1/nothing/here');
    }
  });

  it('405 with Allow for a known path and another method, on every listener', async () => {
    const cases = [
      { url: `${h.urls.public}/v1/probe`, method: 'DELETE', allow: 'POST' },
      { url: `${h.urls.utility}/v1/probe`, method: 'PUT', allow: 'POST, GET' },
      { url: `${h.urls.portal}/auth/session_token`, method: 'PUT', allow: 'GET, POST' },
    ];
    for (const c of cases) {
      const r = await raw(c.url, c.method, { headers: { authorization: `Bearer ${SANDBOX_CLIENT_TOKEN}` } });
      expectErrorBody(r, 405, 'METHOD_NOT_ALLOWED');
      expect(r.headers.get('allow')?.split(', ').sort()).toEqual(c.allow.split(', ').sort());
    }
  });

  it('400 for malformed JSON and for invalid fields (both detail and errors), on the API listeners', async () => {
    for (const l of listeners().filter((x) => x.token)) {
      const auth = { authorization: `Bearer ${l.token}`, 'content-type': 'application/json' };
      const malformed = await raw(`${l.url}/v1/probe`, 'POST', { headers: auth, body: '{"name": ' });
      expectErrorBody(malformed, 400, 'VALIDATION_ERROR');
      const invalid = await raw(`${l.url}/v1/probe`, 'POST', { headers: auth, body: JSON.stringify({ count: 'many' }) });
      expectErrorBody(invalid, 400, 'VALIDATION_ERROR');
      expect(invalid.body.detail).toEqual(
        expect.arrayContaining([expect.objectContaining({ loc: ['body', 'name'] }), expect.objectContaining({ loc: ['body', 'count'] })]),
      );
      expect(invalid.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'name' }), expect.objectContaining({ path: 'count' })]));
      const empty = await raw(`${l.url}/v1/probe`, 'POST', { headers: auth, body: '' });
      expectErrorBody(empty, 400, 'VALIDATION_ERROR');
    }
  });

  it('413 over 1 MiB and 415 for a body that is not JSON, on the API listeners; the anonymous get 401 first', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    for (const l of listeners().filter((x) => x.token)) {
      const auth = { authorization: `Bearer ${l.token}` };
      expectErrorBody(await raw(`${l.url}/v1/probe`, 'POST', { headers: { ...auth, 'content-type': 'application/json' }, body: big }), 413, 'PAYLOAD_TOO_LARGE');
      expectErrorBody(await raw(`${l.url}/v1/probe`, 'POST', { headers: { ...auth, 'content-type': 'text/plain' }, body: 'name=x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      // Just under the limit is accepted.
      const fits = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 20) });
      expect((await raw(`${l.url}/v1/probe`, 'POST', { headers: { ...auth, 'content-type': 'application/json' }, body: fits })).status).toBe(200);
      expectErrorBody(await raw(`${l.url}/v1/probe`, 'POST', { headers: { 'content-type': 'application/json' }, body: big }), 401, 'UNAUTHORIZED');
    }
  });

  it('400 with the error body for bytes that are not HTTP, on every listener', async () => {
    for (const l of listeners()) {
      const answer = await sendGarbage(l.url);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ code: 'VALIDATION_ERROR', status_code: 400, detail: [], errors: [] });
    }
  });

  it('401 at the portal for a missing, unknown or used session token', async () => {
    expectErrorBody(await raw(`${h.urls.portal}/auth/session_token`, 'GET'), 401, 'UNAUTHORIZED');
    expectErrorBody(await raw(`${h.urls.portal}/auth/session_token?token=efs_ss_unknown`, 'GET'), 401, 'UNAUTHORIZED');
    expectErrorBody(await raw(`${h.urls.portal}/auth/session_token?token=${SANDBOX_CLIENT_TOKEN}`, 'GET'), 401, 'UNAUTHORIZED');
  });

  it('503 SERVICE_UNAVAILABLE with Retry-After when the service does not answer in time', async () => {
    const r = await h.api.get('/v1/slow');
    expectErrorBody(r, 503, 'SERVICE_UNAVAILABLE');
    expect(r.headers.get('retry-after')).toBe('1');
  });

  it('serves health on every listener and echoes or makes a request id', async () => {
    for (const l of listeners()) {
      expect((await apiClient(l.url).get('/healthz')).status).toBe(200);
      const ready = await apiClient(l.url).get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.checks).toEqual({ messaging: 'ok', database: 'ok' });
      expect((await apiClient(l.url).get('/healthz', { 'x-request-id': 'trace-me-123' })).headers.get('x-request-id')).toBe('trace-me-123');
      expect((await apiClient(l.url).get('/healthz')).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    const err = await apiClient(h.urls.public).get('/v1/probe-nothing', { 'x-request-id': 'err-id-1' });
    expect(err.headers.get('x-request-id')).toBe('err-id-1');
  });

  it('logs every request with method, path, status and time, and never a token', async () => {
    const site = (await h.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    await apiClient(h.urls.public, site).get('/v1/site/site-a/probe');
    const session = await h.api.post('/v1/sessions', { site: { id: 'site-a' } });
    expect((await fetch(session.body.portal_url)).status).toBe(200);
    const cookie = (await redeemPortalSession(h.urls.portal, session.body.token)).body.session as string;
    await fetch(`${h.urls.public}/v1/site/site-a/probe`, { headers: { cookie: `efs_portal_session=${cookie}` } });
    await apiClient(h.urls.public, 'efs_ct_wrong_token_wrong_token_wrong_token_00').get('/v1/site/site-a/probe');
    const text = logs.lines.join('\n');
    for (const secret of [SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, site, session.body.token, cookie, 'efs_ct_wrong_token_wrong_token_wrong_token_00']) {
      expect(text.includes(secret), `a secret reached the logs: ${secret.slice(0, 10)}…`).toBe(false);
    }
    const completed = logs.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
    expect(completed.length).toBeGreaterThan(5);
    for (const l of completed) expect(l).toMatchObject({ reqId: expect.any(String), res: { statusCode: expect.any(Number) }, responseTime: expect.any(Number) });
    // One line per request: what was asked is on the completed line too.
    expect(completed.some((l) => l.req.url === '/auth/session_token?token=%5Bredacted%5D')).toBe(true);
    expect(completed.every((l) => l.req.method !== undefined && l.req.headers === undefined)).toBe(true);
    // Who asked is on the lines after authentication (kind and token id, never the token).
    expect(completed.some((l) => l.principal_kind === 'SITE' && typeof l.token_id === 'string')).toBe(true);
  });
});

describe.runIf(run)('graceful shutdown', () => {
  it('answers a request in flight when stop() is called, then takes no new connections', async () => {
    const h = await startGatewayWithStubs({ routes: probeRoutes(), slowMs: 700 });
    let stopped = false;
    try {
      const arrived = h.stubs.arrived(ProbeOperations.slow);
      const inFlight = h.api.get('/v1/slow');
      await arrived;
      const stopping = h.gateway.stop();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ slow: true });
      await stopping;
      stopped = true;
      await expect(fetch(`${h.urls.public}/healthz`)).rejects.toThrow();
    } finally {
      if (!stopped) await h.gateway.stop();
      await h.db.close();
      await h.transport.stop();
      await h.database?.drop();
    }
  });
});
