/**
 * The OpenAPI 3.1 documents generated from the routes' zod schemas: one per API listener, each
 * with only its own routes and bearer security schemes, every route with the security
 * requirement of the token kinds it accepts; valid against the OpenAPI 3.1 schema.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable } from '@efs/testing';
import { securityOf } from '../src/plugins/openApi.ts';
import { allRoutes } from '../src/routes/index.ts';
import { routeSchema, type Listener } from '../src/routes/route.ts';
import { startGatewayWithStubs, type GatewayHarness } from './harness.ts';

const run = await tierAvailable('postgres');

const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe.runIf(run)('OpenAPI documents', () => {
  let h: GatewayHarness;
  const docs: Partial<Record<Listener, any>> = {};
  beforeAll(async () => {
    h = await startGatewayWithStubs();
    for (const listener of ['public', 'utility'] as const) {
      const r = await apiClient(h.urls[listener]).get('/openapi.json');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      docs[listener] = r.body;
    }
  });
  afterAll(async () => {
    await h?.stop();
  });

  it.each(['public', 'utility'] as const)('the %s document is valid OpenAPI 3.1', async (listener) => {
    const doc = docs[listener];
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it.each(['public', 'utility'] as const)('the %s document has every route of its listener, with its security requirement, and no other', (listener) => {
    const doc = docs[listener];
    const own = allRoutes.filter((r) => r.listener === listener);
    const documented = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(own.map((r) => `${r.method} ${openApiPath(r.url)}`).sort());
    for (const r of own) {
      const op = doc.paths[openApiPath(r.url)][r.method.toLowerCase()];
      expect(op.security, `${r.method} ${r.url}`).toEqual(securityOf(r));
      expect(op.summary).toBe(r.summary);
      expect(op.tags).toEqual(r.tags);
      expect(Object.keys(op.responses)).toContain('200');
      for (const scheme of op.security.flatMap((s: Record<string, unknown>) => Object.keys(s))) expect(doc.components.securitySchemes[scheme]).toMatchObject({ type: 'http', scheme: 'bearer' });
      if (routeSchema(r).body) expect(op.requestBody?.content?.['application/json']?.schema, `${r.method} ${r.url} body`).toBeDefined();
      // Every route can be refused by authentication, by its rate limit and by a service that does not answer.
      expect(Object.keys(op.responses), `${r.method} ${r.url} responses`).toEqual(expect.arrayContaining(['401', '403', '429', '503']));
      expect(Object.keys(op.responses).sort()).toEqual(Object.keys(routeSchema(r).response).sort());
    }
  });

  it('names the bearer schemes of each audience', () => {
    expect(Object.keys(docs.public.components.securitySchemes).sort()).toEqual(['clientToken', 'portalSession', 'siteToken']);
    expect(Object.keys(docs.utility.components.securitySchemes)).toEqual(['utilityKey']);
    expect(docs.public.paths['/v1/auth/site/{siteId}'].post.responses['200'].content['application/json'].schema).toBeDefined();
  });

  it('serves the rendered reference at /docs with its assets, on both API listeners only', async () => {
    for (const listener of ['public', 'utility'] as const) {
      const page = await fetch(`${h.urls[listener]}/docs`, { redirect: 'follow' });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('swagger-ui');
      const asset = /src="([^"]*swagger-ui-bundle\.js)"/.exec(html)?.[1];
      expect(asset).toBeTruthy();
      const js = await fetch(new URL(asset!, `${h.urls[listener]}/docs/`));
      expect(js.status).toBe(200);
      expect(js.headers.get('content-type')).toMatch(/javascript/);
      expect((await js.text()).length).toBeGreaterThan(100_000);
    }
    expect((await fetch(`${h.urls.portal}/openapi.json`)).status).toBe(404);
  });
});
