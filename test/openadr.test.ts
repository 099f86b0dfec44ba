/**
 * The OpenADR 3.1 VTN face of the utility listener, driven as an OpenADR client would: client
 * credentials from the CLI, tokens from its token endpoint, program reads. Every answer is checked
 * against the published yaml by Ajv (test/harness/openAdrSpec.ts), never against our own schemas.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openAdrClientCommand, credentialCommand } from '@efs/cli';
import { KnexOpenAdrClientStore } from '@efs/gateway';
import { SANDBOX_UTILITY_ID } from '@efs/contracts';
import { apiClient, tierAvailable, waitFor } from '@efs/testing';
import { OpenAdrSpec } from './harness/openAdrSpec.ts';
import { useTestSystem } from './harness/system.ts';

const run = await tierAvailable('postgres');

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

describe.runIf(run)('OpenADR 3.1 VTN: auth and programs', () => {
  const t = useTestSystem();
  const spec = new OpenAdrSpec();
  const base = () => `${t.urls.utility}/openadr3/3.1`;
  const cli = async (sub: 'create' | 'list' | 'revoke', args: string[]) => {
    const out: string[] = [];
    const code = await openAdrClientCommand(sub, args, { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) });
    return { code, out: out.join('\n') };
  };
  const createClient = async (args: string[]) => {
    const r = await cli('create', args);
    expect(r.code, r.out).toBe(0);
    return { id: /client_id: (\S+)/.exec(r.out)![1]!, secret: /client_secret: (\S+)/.exec(r.out)![1]! };
  };

  /** A request to the face; the answer is checked against the operation the yaml declares (`op`), or the problem shape. */
  const request = async (method: string, path: string, opts: { op?: string; token?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const r = await fetch(base() + path, { method, headers, ...(opts.body !== undefined ? { body: opts.body } : {}) });
    const text = await r.text();
    const body = text ? JSON.parse(text) : undefined;
    if (opts.op) spec.answer(method, opts.op, r.status, body);
    else spec.problem(body);
    return { status: r.status, body, headers: r.headers };
  };
  const form = (fields: Record<string, string>) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const tokenFor = async (c: { id: string; secret: string }, scope?: string) => {
    const r = await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: c.id, client_secret: c.secret, ...(scope ? { scope } : {}) }) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.access_token as string;
  };
  const expectProblem = (r: Answer, status: number) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body).toMatchObject({ status, type: 'about:blank' });
    expect(r.body.code).toBeUndefined();
  };

  let sandboxBl: { id: string; secret: string };
  let gridBl: { id: string; secret: string };
  let ven: { id: string; secret: string };
  let gridProgramId: string;

  beforeAll(async () => {
    sandboxBl = await createClient(['--role', 'BL', '--utility', SANDBOX_UTILITY_ID]);
    gridBl = await createClient(['--role', 'BL', '--utility', 'grid-co', '--label', 'grid-co BL']);
    ven = await createClient(['--role', 'VEN', '--integrator', 'acme']);
    const out: string[] = [];
    expect(await credentialCommand('utility-key', 'create', ['--utility', 'grid-co'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    const key = /token: (\S+)/.exec(out.join('\n'))![1]!;
    const gridUtility = apiClient(t.urls.utility, key);
    // A new key reaches the gateway's credentials through efs.auth.credentials within seconds.
    await waitFor(async () => (await gridUtility.get('/v1/programs')).status === 200, { what: 'the new utility key' });
    const created = await gridUtility.post('/v1/programs', { name: `Grid-co summer ${'x'.repeat(200)}`, eligible_device_types: ['BATTERY'], zip_codes: ['70001'], description: 'Evening peaks' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    gridProgramId = created.body.id;
  });

  it('the CLI prints the id and secret once and lists clients without secrets; the secret is kept hashed', async () => {
    const listed = await cli('list', []);
    expect(listed.out).toContain(`${gridBl.id}  BL  utility grid-co`);
    expect(listed.out).toContain(`${ven.id}  VEN  integrator acme`);
    expect(listed.out).not.toContain(gridBl.secret);
    const rows = await t.system.db.knex.withSchema('auth').table('openadr_clients').select('secret_hash');
    expect(rows.map((r: { secret_hash: string }) => r.secret_hash)).not.toContain(gridBl.secret);
    await expect(cli('create', ['--role', 'BL', '--integrator', 'acme'])).rejects.toThrow(/a BL client belongs to a utility/);
  });

  it('GET /auth/server names the token endpoint', async () => {
    const r = await request('GET', '/auth/server', { op: '/auth/server' });
    expect(r.status).toBe(200);
    expect(r.body.tokenURL).toBe(`${base()}/auth/token`);
  });

  it('POST /auth/token grants the role scopes, by form or HTTP Basic; refusals are problems with the OAuth error', async () => {
    const r = await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: gridBl.id, client_secret: gridBl.secret }) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(r.body.scope.split(' ').sort()).toEqual(['read_all', 'read_bl', 'write_events', 'write_programs', 'write_subscriptions', 'write_vens']);
    expect(r.headers.get('cache-control')).toBe('no-store');

    const basic = `Basic ${Buffer.from(`${encodeURIComponent(ven.id)}:${encodeURIComponent(ven.secret)}`).toString('base64')}`;
    const viaBasic = await request('POST', '/auth/token', { op: '/auth/token', headers: { ...form({}).headers, authorization: basic }, body: 'grant_type=client_credentials' });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.body.scope.split(' ')).toContain('read_targets');

    const wrong = await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: gridBl.id, client_secret: `${gridBl.secret}x` }) });
    expectProblem(wrong, 401);
    expect(wrong.body.error).toBe('invalid_client');
    const wrongBasic = await request('POST', '/auth/token', { op: '/auth/token', headers: { ...form({}).headers, authorization: `Basic ${Buffer.from(`${ven.id}:nope`).toString('base64')}` }, body: 'grant_type=client_credentials' });
    expectProblem(wrongBasic, 401);
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'password', client_id: gridBl.id, client_secret: gridBl.secret }) })).body.error).toBe('unsupported_grant_type');
    expect((await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: gridBl.id }) })).body.error).toBe('invalid_request');
    const json = await request('POST', '/auth/token', { op: '/auth/token', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: gridBl.id, client_secret: gridBl.secret }) });
    expectProblem(json, 400);
    const scope = await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: ven.id, client_secret: ven.secret, scope: 'read_targets write_programs' }) });
    expectProblem(scope, 400);
    expect(scope.body.error).toBe('invalid_scope');
  });

  it("GET /programs shows a BL client its utility's programs, the same as GET /v1/programs of the utility API", async () => {
    const token = await tokenFor(sandboxBl);
    const r = await request('GET', '/programs', { op: '/programs', token });
    expect(r.status).toBe(200);
    const ours = (await t.utility.get('/v1/programs?limit=50')).body as { id: string; name: string; zip_codes: string[] }[];
    expect(ours.length).toBeGreaterThan(0);
    expect(r.body.map((p: { id: string }) => p.id)).toEqual(ours.map((p) => p.id));
    expect(r.body.map((p: { id: string }) => p.id)).not.toContain(gridProgramId);
    const first = r.body[0];
    expect(first).toMatchObject({ objectType: 'PROGRAM', programName: ours[0]!.name, targets: null });
    expect(first.attributes).toContainEqual({ type: 'POSTAL_CODES', values: ours[0]!.zip_codes });

    const grid = await request('GET', '/programs', { op: '/programs', token: await tokenFor(gridBl) });
    expect(grid.body.map((p: { id: string }) => p.id)).toEqual([gridProgramId]);
    expect(grid.body[0].programName).toHaveLength(128);
    expect(grid.body[0].attributes).toContainEqual({ type: 'DESCRIPTION', values: ['Evening peaks'] });
  });

  it('pages with skip and limit as the yaml bounds them (limit 0..50); a targets filter matches no program', async () => {
    const token = await tokenFor(sandboxBl);
    const all = (await request('GET', '/programs', { op: '/programs', token })).body as { id: string }[];
    expect(all.length).toBeGreaterThan(1);
    expect((await request('GET', '/programs?limit=1', { op: '/programs', token })).body.map((p: { id: string }) => p.id)).toEqual([all[0]!.id]);
    expect((await request('GET', '/programs?skip=1&limit=1', { op: '/programs', token })).body.map((p: { id: string }) => p.id)).toEqual([all[1]!.id]);
    expect((await request('GET', '/programs?limit=0', { op: '/programs', token })).body).toEqual([]);
    expect((await request('GET', `/programs?skip=${all.length}`, { op: '/programs', token })).body).toEqual([]);
    expect((await request('GET', '/programs?targets=group-1&targets=group-2', { op: '/programs', token })).body).toEqual([]);
    for (const q of ['limit=51', 'limit=-1', 'skip=-1', 'limit=abc', 'skip=2147483648']) expectProblem(await request('GET', `/programs?${q}`, { op: '/programs', token }), 400);
  });

  it('GET /programs/{programID}: its own program, 404 for another utility\'s or an unknown one, 400 for a malformed id', async () => {
    const token = await tokenFor(gridBl);
    const r = await request('GET', `/programs/${gridProgramId}`, { op: '/programs/{programID}', token });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(gridProgramId);
    const sandboxProgram = (await t.utility.get('/v1/programs?limit=1')).body[0].id as string;
    expectProblem(await request('GET', `/programs/${sandboxProgram}`, { op: '/programs/{programID}', token }), 404);
    expectProblem(await request('GET', '/programs/00000000-0000-4000-8000-000000000000', { op: '/programs/{programID}', token }), 404);
    expectProblem(await request('GET', '/programs/object-999', { op: '/programs/{programID}', token }), 404);
    expectProblem(await request('GET', '/programs/bad.id', { op: '/programs/{programID}', token }), 400);
  });

  it('a VEN client reads the catalog as its integrator does on GET /v1/programs, without coverage', async () => {
    const token = await tokenFor(ven);
    const r = await request('GET', '/programs', { op: '/programs', token });
    expect(r.status).toBe(200);
    const catalog = (await t.api.get('/v1/programs?limit=50')).body as { id: string }[];
    expect(r.body.map((p: { id: string }) => p.id)).toEqual(catalog.map((p) => p.id));
    expect(r.body.flatMap((p: { attributes: { type: string }[] }) => p.attributes.map((a) => a.type))).not.toContain('POSTAL_CODES');
    const one = await request('GET', `/programs/${gridProgramId}`, { op: '/programs/{programID}', token });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(gridProgramId);
  });

  it('401 without, with a bad, an expired or a revoked token; 403 without the scope', async () => {
    const missing = await request('GET', '/programs', { op: '/programs' });
    expectProblem(missing, 401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expectProblem(await request('GET', '/programs', { op: '/programs', token: 'efs_oat_not-a-token' }), 401);
    expectProblem(await request('GET', '/programs', { op: '/programs', headers: { authorization: 'Basic abc' } }), 401);

    const store = new KnexOpenAdrClientStore(t.system.db.knex, 'auth');
    const client = (await store.list()).find((c) => c.id === gridBl.id)!;
    const expired = await store.issueToken(client, ['read_all'], 60, new Date(Date.now() - 3600_000));
    expectProblem(await request('GET', '/programs', { op: '/programs', token: expired.token }), 401);

    const narrow = await tokenFor(gridBl, 'write_subscriptions');
    const forbidden = await request('GET', '/programs', { op: '/programs', token: narrow });
    expectProblem(forbidden, 403);
    expectProblem(await request('GET', `/programs/${gridProgramId}`, { op: '/programs/{programID}', token: narrow }), 403);

    const doomed = await createClient(['--role', 'BL', '--utility', 'grid-co']);
    const token = await tokenFor(doomed);
    expect((await request('GET', '/programs', { op: '/programs', token })).status).toBe(200);
    expect((await cli('revoke', [doomed.id])).code).toBe(0);
    expectProblem(await request('GET', '/programs', { op: '/programs', token }), 401);
    const again = await request('POST', '/auth/token', { op: '/auth/token', ...form({ grant_type: 'client_credentials', client_id: doomed.id, client_secret: doomed.secret }) });
    expectProblem(again, 401);
    expect((await cli('revoke', [doomed.id])).code).toBe(1);
  });

  it('every other answer under the prefix is a problem too: unknown paths, other methods, not yet routed operations', async () => {
    const token = await tokenFor(gridBl);
    expectProblem(await request('GET', '/nothing-here', { token }), 404);
    expectProblem(await request('GET', '/events', { token }), 404);
    const other = await request('DELETE', '/programs', { token });
    expectProblem(other, 405);
    expect(other.headers.get('allow')).toBe('GET');
    // Our own API on the same listener keeps its own error body, and its OpenAPI document leaves the face to the yaml.
    expect((await t.utility.get('/v1/nothing')).body.code).toBe('NOT_FOUND');
    expect(Object.keys((await t.utility.get('/openapi.json')).body.paths).filter((p) => p.startsWith('/openadr3'))).toEqual([]);
  });
});
