/**
 * VALIDATE_REPLIES: a forwarded reply that breaks the route's declared responses (a body its
 * schema refuses, a status it does not declare) answers 500 naming the drift instead of being
 * relayed, so tests catch an OpenAPI document that says otherwise than what is served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '@efs/errors';
import { tierAvailable } from '@efs/testing';
import { replyDrift } from '../src/forward.ts';
import { allRoutes } from '../src/routes/index.ts';
import { siteRecord, startGatewayWithStubs, type GatewayHarness } from './harness.ts';

const run = await tierAvailable('postgres');

const listSites = allRoutes.find((r) => r.method === 'GET' && r.url === '/v1/sites')!;
const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });

describe('replyDrift', () => {
  it('accepts a reply its route declares, with a body of the declared schema', () => {
    expect(replyDrift(listSites, json(200, [siteRecord('s1')]))).toBeUndefined();
    expect(replyDrift(listSites, json(403, Errors.FORBIDDEN().toBody()))).toBeUndefined();
  });

  it('names a body the schema refuses, a status the route does not declare, and a body that is not JSON', () => {
    expect(replyDrift(listSites, json(200, [{ id: 's1' }]))).toMatch(/^the 200 reply does not match its schema: 0\.first_name: /);
    expect(replyDrift(listSites, json(404, Errors.NOT_FOUND().toBody()))).toBe('status 404 is not among the declared responses');
    expect(replyDrift(listSites, json(403, { message: 'no' }))).toMatch(/^the 403 reply does not match its schema/);
    expect(replyDrift(listSites, { status: 200, body: 'not json' })).toBe('the body of the 200 reply is not JSON');
  });
});

describe.runIf(run)('gateway with VALIDATE_REPLIES', () => {
  let checked: GatewayHarness;
  let unchecked: GatewayHarness;
  beforeAll(async () => {
    // The stubs echo the request, which is no list of sites.
    checked = await startGatewayWithStubs({ routes: [listSites], env: { VALIDATE_REPLIES: 'true' } });
    unchecked = await startGatewayWithStubs({ routes: [listSites] });
  });
  afterAll(async () => {
    await checked?.stop();
    await unchecked?.stop();
  });

  it('answers 500 naming the drift instead of relaying a reply that breaks the schema', async () => {
    const r = await checked.api.get('/v1/sites');
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringContaining('GET /v1/sites: the 200 reply does not match its schema') });
  });

  it('relays the reply as it is when the option is off', async () => {
    const r = await unchecked.api.get('/v1/sites');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stub: true });
  });
});
