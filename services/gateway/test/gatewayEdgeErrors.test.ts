/**
 * The edge of every listener: what Node and Fastify refuse before a route runs (bad
 * percent-encoding, over-long URLs and path segments, header overflow, missing Host, odd
 * Expect, content types that are not UTF-8 JSON, slow clients) and what the input layer refuses
 * for every route at once (NUL and unpaired surrogates anywhere, JSON nested too deep) all answer
 * the specification's error body naming what was wrong.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tierAvailable, type ApiResponse } from '@efs/testing';
import {
  expectErrorBody,
  probeRoutes,
  raw,
  SANDBOX_CLIENT_TOKEN,
  SANDBOX_UTILITY_API_KEY,
  startGatewayWithStubs,
  type StubbedGateway,
} from './harness.ts';

/** A request through fetch, answered as status, headers and (JSON) body. */
const call = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => raw(url, init.method ?? 'GET', init);

const run = await tierAvailable('postgres');
const REQUEST_TIMEOUT_MS = 1000;

/** Writes raw bytes (optionally in timed pieces) and parses the answer: status line and JSON body. */
function rawExchange(url: string, pieces: string[], opts: { gapMs?: number; timeoutMs?: number } = {}): Promise<ApiResponse & { elapsedMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let data = '';
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      pieces.forEach((p, i) => setTimeout(() => socket.writable && socket.write(p), i * (opts.gapMs ?? 0)));
    });
    const finish = () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      const head = data.indexOf('\r\n\r\n');
      const headers = new Headers();
      for (const line of data.slice(0, head).split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      const text = data.slice(head + 4);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      resolve({ status, headers, body, elapsedMs: Date.now() - started });
    };
    socket.on('data', (d) => {
      data += d.toString('latin1');
      // A complete answer with Content-Length is enough (a kept-alive socket stays open).
      const length = Number(/content-length: (\d+)/i.exec(data)?.[1] ?? -1);
      const head = data.indexOf('\r\n\r\n');
      if (length >= 0 && head >= 0 && Buffer.byteLength(data.slice(head + 4), 'latin1') >= length) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', finish);
    socket.on('error', (err) => (data ? finish() : reject(err)));
    socket.setTimeout(opts.timeoutMs ?? 20_000, () => socket.destroy());
  });
}

describe.runIf(run)('error bodies at the edge of every listener', () => {
  let h: StubbedGateway;
  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes(), env: { HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) }, sandboxSites: ['site-a'] });
  });
  afterAll(async () => {
    await h?.stop();
  });
  const listeners = () => [h.urls.public, h.urls.utility, h.urls.portal];
  const client = { authorization: `Bearer ${SANDBOX_CLIENT_TOKEN}` };
  const json = { ...client, 'content-type': 'application/json' };

  it('400 for malformed percent-encoding (FST_ERR_BAD_URL), on every listener', async () => {
    for (const url of listeners()) {
      const r = await call(`${url}/v1/auth/site/%zz`, { method: 'POST', headers: client });
      expectErrorBody(r, 400, 'VALIDATION_ERROR');
      expect(r.body.detail[0].loc).toEqual(['path']);
    }
  });

  it('414 for a URL over 8 KiB and a path segment over 1,024 characters; 431 for too many header bytes; on every listener', async () => {
    for (const url of listeners()) {
      expectErrorBody(await call(`${url}/v1/programs?zip_code=${'1'.repeat(9000)}`, { headers: client }), 414, 'URI_TOO_LONG');
      const huge = await rawExchange(url, [`GET /v1/programs?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expectErrorBody(huge, 414, 'URI_TOO_LONG');
      const headers: Record<string, string> = {};
      for (let i = 0; i < 40; i++) headers[`x-filler-${i}`] = 'v'.repeat(1000);
      const many = await rawExchange(url, [`GET /healthz HTTP/1.1\r\nHost: x\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`]);
      expectErrorBody(many, 431, 'HEADERS_TOO_LARGE');
    }
    expectErrorBody(await call(`${h.urls.public}/v1/auth/site/${'a'.repeat(1100)}`, { method: 'POST', headers: client }), 414, 'URI_TOO_LONG');
    // Under the router's limit, the route's own schema bounds the id (255) and names it.
    const long = await call(`${h.urls.public}/v1/auth/site/${'a'.repeat(300)}`, { method: 'POST', headers: client });
    expectErrorBody(long, 400, 'VALIDATION_ERROR');
    expect(long.body.detail[0].loc).toEqual(['path', 'siteId']);
  });

  it('400 with the error body for an HTTP/1.1 request without Host; an unknown Expect is ignored', async () => {
    for (const url of listeners()) {
      const r = await rawExchange(url, ['GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n']);
      expectErrorBody(r, 400, 'VALIDATION_ERROR');
      expect(r.body.detail[0].loc).toEqual(['header', 'host']);
      const expectation = await rawExchange(url, ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n']);
      expect(expectation.status).toBe(200);
    }
  });

  it('415 for a body declared in another charset or another type, 400 for a malformed Content-Length', async () => {
    for (const ct of ['application/json; charset=utf-16', 'application/json;charset="latin1"', 'application/xml', 'multipart/form-data; boundary=x', ';;;']) {
      expectErrorBody(await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: { ...client, 'content-type': ct }, body: '{"name":"x"}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expect((await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: { ...client, 'content-type': 'application/json; charset=UTF-8' }, body: '{"name":"x"}' })).status).toBe(200);
    const r = await rawExchange(h.urls.public, [`POST /v1/probe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SANDBOX_CLIENT_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`]);
    expectErrorBody(r, 400, 'VALIDATION_ERROR');
  });

  it('refuses NUL and unpaired surrogates in path segments, query values, body strings and keys with 400 naming each field, on every listener', async () => {
    const path = await call(`${h.urls.public}/v1/auth/site/a%00b`, { method: 'POST', headers: client });
    expectErrorBody(path, 400, 'VALIDATION_ERROR');
    expect(path.body.detail).toEqual([{ loc: ['path', 'siteId'], msg: expect.stringContaining('NUL'), type: 'invalid_text' }]);
    expect(path.body.errors).toEqual([{ path: 'siteId', message: expect.stringContaining('NUL') }]);

    const query = await call(`${h.urls.utility}/v1/probe?q=x%00`, { headers: { authorization: `Bearer ${SANDBOX_UTILITY_API_KEY}` } });
    expectErrorBody(query, 400, 'VALIDATION_ERROR');
    expect(query.body.detail[0].loc).toEqual(['query', 'q']);
    const portal = await call(`${h.urls.portal}/auth/session_token?token=efs_ss_%00`);
    expectErrorBody(portal, 400, 'VALIDATION_ERROR');
    expect(portal.body.detail[0].loc).toEqual(['query', 'token']);

    const body = await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: '{"name":"a\\u0000b","tags":["ok","\\ud800"],"nested":{"k\\u0000":1,"deep":{"x":"\\udc00y"}}}' });
    expectErrorBody(body, 400, 'VALIDATION_ERROR');
    expect(body.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['body', 'name'],
      ['body', 'tags', '1'],
      ['body', 'nested', 'k\\u0000'],
      ['body', 'nested', 'deep', 'x'],
    ]);
    expect(body.body.errors.map((e: { path: string }) => e.path)).toEqual(['name', 'tags/1', 'nested/k\\u0000', 'nested/deep/x']);
    expect(body.body.message).toBe('Invalid body: name: must not contain the NUL character (\\u0000)');
    // Paired surrogates (an emoji) and other control characters are ordinary text.
    expect((await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'ok 🔋 \t' }) })).status).toBe(200);
    // A body without a \u escape is not walked: a raw NUL in a string is no JSON (the parser's
    // 400), and an escaped backslash before "ud800" is plain text; one escape anywhere is walked.
    const rawNul = await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: '{"name":"a\u0000b"}' });
    expectErrorBody(rawNul, 400, 'VALIDATION_ERROR');
    expect((await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: '{"name":"a\\\\ud800b"}' })).status).toBe(200);
    const late = await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: `{"tags":[${'"ok",'.repeat(1000)}"\\u00e9\\u0000"]}` });
    expect(late.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([['body', 'tags', '1000']]);
    // Nothing refused reached a service.
    expect(h.stubs.calls.some((c) => JSON.stringify(c.request).includes('\\u0000'))).toBe(false);
  });

  it('400 for JSON nested deeper than 32 levels (10,000 levels included), not a 500; 32 levels pass', async () => {
    const nest = (n: number) => `{"name":"x","extra":${'['.repeat(n)}${']'.repeat(n)}}`;
    const deep = await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: nest(10_000) });
    expectErrorBody(deep, 400, 'VALIDATION_ERROR');
    expect(deep.body.detail).toEqual([{ loc: ['body'], msg: 'JSON nested deeper than 32 levels', type: 'too_deep' }]);
    expectErrorBody(await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: nest(32) }), 400, 'VALIDATION_ERROR');
    expect((await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: nest(31) })).status).toBe(200);
    // Brackets inside strings are text, not nesting.
    expect((await call(`${h.urls.public}/v1/probe`, { method: 'POST', headers: json, body: JSON.stringify({ name: '['.repeat(100) + '"\\' }) })).status).toBe(200);
  });

  it('408 with the error body once HTTP_REQUEST_TIMEOUT_MS has passed for a client that sends its request too slowly', async () => {
    // Headers that never end, and a body that never completes.
    const headers = await rawExchange(h.urls.public, ['GET /healthz HTTP/1.1\r\n', 'Host: x\r\n'], { gapMs: 100 });
    const body = await rawExchange(h.urls.public, [`POST /v1/probe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SANDBOX_CLIENT_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`]);
    for (const r of [headers, body]) {
      expectErrorBody(r, 408, 'REQUEST_TIMEOUT');
      expect(r.elapsedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
      // Node checks request deadlines every 30 s by default: without a tighter check the answer
      // came 30 s or more late. The bound is loose on purpose (a busy machine), far below that.
      expect(r.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + 8000);
    }
  });
});
