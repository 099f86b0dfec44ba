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
import { OpenAdrSpec, openAdrSpecAvailable } from './harness/openAdrSpec.ts';
import { commandsOf, discharge, enrolledSite, inSeconds, newProgram, waitForCommands } from './dispatchHelpers.ts';
import { useTestSystem } from './harness/system.ts';

const run = (await tierAvailable('postgres')) && openAdrSpecAvailable();

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

describe.runIf(run)('OpenADR 3.1 VTN: auth, programs and events', () => {
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
  /** grid-co's utility API (its own key). */
  let gridUtility: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    sandboxBl = await createClient(['--role', 'BL', '--utility', SANDBOX_UTILITY_ID]);
    gridBl = await createClient(['--role', 'BL', '--utility', 'grid-co', '--label', 'grid-co BL']);
    ven = await createClient(['--role', 'VEN', '--integrator', 'acme']);
    const out: string[] = [];
    expect(await credentialCommand('utility-key', 'create', ['--utility', 'grid-co'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    const key = /token: (\S+)/.exec(out.join('\n'))![1]!;
    gridUtility = apiClient(t.urls.utility, key);
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
    // Text no database holds, in the Basic credentials: refused as malformed, never a 500.
    for (const id of ['%00', '\u0000x', '%ED%A0%80']) {
      const hostile = await request('POST', '/auth/token', { op: '/auth/token', headers: { ...form({}).headers, authorization: `Basic ${Buffer.from(`${id}:x`).toString('base64')}` }, body: 'grant_type=client_credentials' });
      expectProblem(hostile, 401);
      expect(hostile.body.error, id).toBe('invalid_client');
    }
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

  it('POST /programs writes the utility\'s catalog with its rules: the attributes it shows set the terms; what it cannot keep is refused', async () => {
    const token = await tokenFor(gridBl);
    const post = (body: Record<string, unknown>, as = token) => request('POST', '/programs', { op: '/programs', token: as, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const attributes = [
      { type: 'DESCRIPTION', values: ['Winter mornings'] },
      { type: 'ELIGIBLE_DEVICE_TYPES', values: ['BATTERY'] },
      { type: 'POSTAL_CODES', values: ['70002', '70003'] },
      { type: 'PARTICIPATION_MONTHS', values: [1, 2, 12] },
      { type: 'MINIMUM_RESERVE_PERCENTAGE', values: [30] },
      { type: 'MINIMUM_COMMITMENT_MONTHS', values: [6] },
      { type: 'CAN_AUTO_ENROLL', values: [true] },
    ];
    const r = await post({ programName: 'Winter mornings', attributes });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.programName).toBe('Winter mornings');
    expect(r.body.attributes).toEqual(expect.arrayContaining(attributes));
    const ours = (await gridUtility.get(`/v1/programs/${r.body.id}`)).body;
    expect(ours).toMatchObject({ name: 'Winter mornings', description: 'Winter mornings', eligible_device_types: ['BATTERY'], zip_codes: ['70002', '70003'], participation_months: [1, 2, 12], minimum_reserve_percentage: 30, minimum_commitment_months: 6, can_auto_enroll: true, terms_and_conditions_text: null });
    expect((await request('GET', `/programs/${r.body.id}`, { op: '/programs/{programID}', token })).body).toEqual(r.body);

    const minimal = { programName: 'Minimal', attributes: attributes.slice(1, 3) };
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ programName: 'x', attributes: attributes.slice(1, 2) }, /POSTAL_CODES is required/],
      [{ ...minimal, attributes: [...minimal.attributes, { type: 'PROGRAM_TYPE', values: ['DR'] }] }, /PROGRAM_TYPE/],
      [{ ...minimal, attributes: [...minimal.attributes, attributes[1]] }, /twice/],
      [{ ...minimal, attributes: [{ type: 'ELIGIBLE_DEVICE_TYPES', values: ['TOASTER'] }, attributes[2]] }, /ELIGIBLE_DEVICE_TYPES/],
      [{ ...minimal, attributes: [...minimal.attributes, { type: 'MINIMUM_RESERVE_PERCENTAGE', values: [101] }] }, /MINIMUM_RESERVE_PERCENTAGE/],
      [{ ...minimal, targets: ['group-1'] }, /targets/],
      [{ ...minimal, intervalPeriod: { start: '2030-01-01T00:00:00Z', duration: 'P1Y' } }, /intervalPeriod/],
      [{ ...minimal, programDescriptions: [{ URL: 'https://example.com/terms' }] }, /DESCRIPTION/],
      [{ attributes: minimal.attributes }, /programName/],
    ];
    for (const [body, detail] of refused) {
      const bad = await post(body);
      expectProblem(bad, 400);
      expect(bad.body.detail).toMatch(detail);
    }
    expectProblem(await post(minimal, await tokenFor(ven)), 403);
    expectProblem(await post(minimal, await tokenFor(gridBl, 'read_all')), 403);
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
    expectProblem(await request('GET', '/reports', { token }), 404);
    expectProblem(await request('GET', '/subscriptions', { token }), 404);
    const other = await request('DELETE', '/programs', { token });
    expectProblem(other, 405);
    expect(other.headers.get('allow')).toBe('GET, POST');
    // Our own API on the same listener keeps its own error body, and its OpenAPI document leaves the face to the yaml.
    expect((await t.utility.get('/v1/nothing')).body.code).toBe('NOT_FOUND');
    expect(Object.keys((await t.utility.get('/openapi.json')).body.paths).filter((p) => p.startsWith('/openadr3'))).toEqual([]);
  });

  describe('events', () => {
    const simple = (level: number) => ({ type: 'SIMPLE', values: [level] });
    /** POST /events until dispatch knows the program and its enrollments (its read models follow the topics a moment behind). */
    const createSimple = async (token: string, body: Record<string, unknown>) => {
      let last: Answer | undefined;
      await waitFor(async () => {
        last = await request('POST', '/events', { op: '/events', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return last.status !== 400 && !(last.status === 409 && /ACTIVE/.test(last.body.detail ?? ''));
      }, { what: 'dispatch to know the program' }).catch(() => undefined);
      return last!;
    };

    it('POST /events with SIMPLE levels creates our event: intervals become actions, levels modes, and commands fan out', async () => {
      const p = await newProgram(t);
      const site = await enrolledSite(t, p);
      const token = await tokenFor(sandboxBl);
      const start = inSeconds(3600);
      const r = await createSimple(token, {
        programID: p.id,
        eventName: 'evening peak',
        payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'SIMPLE' }],
        intervalPeriod: { start, duration: 'PT30M' },
        intervals: [{ id: 0, payloads: [simple(2)] }, { id: 1, payloads: [simple(3)] }, { id: 2, intervalPeriod: { start: inSeconds(3 * 3600), duration: 'PT1H' }, payloads: [simple(0)] }],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ objectType: 'EVENT', programID: p.id, targets: null });
      expect(r.body.intervals.map((i: { payloads: { type: string; values: unknown[] }[] }) => i.payloads.find((x) => x.type === 'SIMPLE')!.values)).toEqual([[2], [3], [0]]);

      const ours = await t.utility.get(`/v1/events/${r.body.id}`);
      expect(ours.status).toBe(200);
      expect(ours.body).toMatchObject({ target_type: 'PROGRAM', target_ids: [p.id], status: 'UPCOMING' });
      expect(ours.body.actions.map((a: { mode: string; duration_s: number }) => [a.mode, a.duration_s])).toEqual([['DISCHARGE', 1800], ['BACKUP', 1800], ['SELF_CONSUMPTION', 3600]]);
      expect(new Date(ours.body.actions[1].starts_at).getTime()).toBe(new Date(start).getTime() + 1800_000);
      // One command per action for the enrolled battery.
      const commands = await waitForCommands(t.api, r.body.id, 3);
      expect([...new Set(commands.map((c) => c.device_id))]).toEqual(site.devices);

      const read = await request('GET', `/events/${r.body.id}`, { op: '/events/{eventID}', token });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(r.body);
      const listed = await request('GET', `/events?programID=${p.id}`, { op: '/events', token });
      expect(listed.body.map((e: { id: string }) => e.id)).toEqual([r.body.id]);

      // A start of "0001-01-01" is now (User Guide).
      const before = Date.now();
      const now = await createSimple(token, { programID: p.id, targets: [`SITE:${site.siteId}`], intervalPeriod: { start: '0001-01-01', duration: 'PT10M' }, intervals: [{ id: 0, payloads: [simple(1)] }] });
      expect(now.status, JSON.stringify(now.body)).toBe(201);
      const startedAt = new Date(now.body.intervals[0].intervalPeriod.start).getTime();
      expect(startedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(startedAt).toBeLessThanOrEqual(Date.now());
      expect(now.body.targets).toEqual([`SITE:${site.siteId}`]);
      expect((await t.utility.get(`/v1/events/${now.body.id}`)).body.actions[0].mode).toBe('SAVINGS');
    });

    it('events made through our utility API appear too; a canceled one is gone; targets and paging filter', async () => {
      const p = await newProgram(t);
      const site = await enrolledSite(t, p);
      const token = await tokenFor(sandboxBl);
      let made: Answer | undefined;
      await waitFor(async () => (made = { ...(await t.utility.post('/v1/events', { program_id: p.id, target_type: 'SITE', target_ids: [site.siteId], actions: [discharge(2000)] })), headers: new Headers() }).status === 200, { what: 'dispatch knows the site' });
      const id = made!.body.id as string;
      const read = await request('GET', `/events/${id}`, { op: '/events/{eventID}', token });
      expect(read.status).toBe(200);
      expect(read.body.targets).toEqual([`SITE:${site.siteId}`]);
      expect(read.body.intervals[0].payloads).toEqual([simple(2), { type: 'EFS_MODE', values: ['DISCHARGE'] }, { type: 'EFS_SETPOINT_W', values: [2000] }]);

      expect((await request('GET', `/events?programID=${p.id}&targets=SITE:${site.siteId}`, { op: '/events', token })).body.map((e: { id: string }) => e.id)).toEqual([id]);
      expect((await request('GET', `/events?programID=${p.id}&targets=SITE:elsewhere`, { op: '/events', token })).body).toEqual([]);
      expect((await request('GET', `/events?programID=${p.id}&limit=0`, { op: '/events', token })).body).toEqual([]);
      expect((await request('GET', `/events?programID=${p.id}&active=true`, { op: '/events', token })).body).toHaveLength(1);
      expectProblem(await request('GET', '/events?limit=51', { op: '/events', token }), 400);
      expectProblem(await request('GET', '/events?active=maybe', { op: '/events', token }), 400);
      expect((await request('GET', '/events?programID=no-such-program', { op: '/events', token })).body).toEqual([]);

      // Another utility's BL client does not see it.
      expectProblem(await request('GET', `/events/${id}`, { op: '/events/{eventID}', token: await tokenFor(gridBl) }), 404);
      expect((await commandsOf(t.api, id)).length).toBe(1);
      expect((await t.utility.delete(`/v1/events/${id}`)).status).toBe(200);
      expectProblem(await request('GET', `/events/${id}`, { op: '/events/{eventID}', token }), 404);
      expect((await request('GET', `/events?programID=${p.id}`, { op: '/events', token })).body).toEqual([]);
      expectProblem(await request('DELETE', `/events/${id}`, { op: '/events/{eventID}', token }), 404);

      // DELETE through OpenADR cancels the event and its commands, as DELETE /v1/events/{id} does.
      let again: Answer | undefined;
      await waitFor(async () => (again = { ...(await t.utility.post('/v1/events', { program_id: p.id, target_type: 'SITE', target_ids: [site.siteId], actions: [discharge(1000)] })), headers: new Headers() }).status === 200, { what: 'a second event' });
      const second = again!.body.id as string;
      await waitForCommands(t.api, second, 1);
      expectProblem(await request('DELETE', `/events/${second}`, { op: '/events/{eventID}', token: await tokenFor(gridBl) }), 404);
      expectProblem(await request('DELETE', `/events/${second}`, { op: '/events/{eventID}', token: await tokenFor(sandboxBl, 'read_all') }), 403);
      const deleted = await request('DELETE', `/events/${second}`, { op: '/events/{eventID}', token });
      expect(deleted.status).toBe(200);
      expect(deleted.body.id).toBe(second);
      expect((await t.utility.get(`/v1/events/${second}`)).body.status).toBe('CANCELED');
      await waitFor(async () => (await commandsOf(t.api, second)).every((c) => c.status === 'CANCELED'), { what: 'its commands canceled' });
      expectProblem(await request('GET', `/events/${second}`, { op: '/events/{eventID}', token }), 404);
    });

    it('refuses what it cannot carry out with 400 naming it; VEN clients and missing scopes get 403', async () => {
      const token = await tokenFor(sandboxBl);
      const post = (body: Record<string, unknown>, as = token) => request('POST', '/events', { op: '/events', token: as, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const program = (await t.utility.get('/v1/programs?limit=1')).body[0].id as string;
      const base = { programID: program, intervalPeriod: { start: inSeconds(3600), duration: 'PT1H' }, intervals: [{ id: 0, payloads: [simple(1)] }] };
      const refused: [Record<string, unknown>, RegExp][] = [
        [{ ...base, intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: [0.2] }] }] }, /PRICE/],
        [{ ...base, payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'DISPATCH_SETPOINT' }] }, /DISPATCH_SETPOINT/],
        [{ ...base, intervals: [{ id: 0, payloads: [simple(4)] }] }, /SIMPLE/],
        [{ ...base, intervalPeriod: { start: inSeconds(3600), duration: 'P1M' } }, /P1M/],
        [{ ...base, targets: ['DEVICE:a', 'SITE:b'] }, /one kind of target/],
        [{ ...base, targets: ['group-1'] }, /group-1/],
        [{ ...base, programID: '00000000-0000-4000-8000-000000000000' }, /./],
        [{ ...base, programID: 'not ok!' }, /./],
        [{ ...base, intervals: [] }, /intervals/],
      ];
      for (const [body, detail] of refused) {
        const r = await post(body);
        expectProblem(r, 400);
        expect(r.body.detail).toMatch(detail);
      }
      const venToken = await tokenFor(ven);
      expectProblem(await post(base, venToken), 403);
      expectProblem(await request('GET', '/events', { op: '/events', token: venToken }), 403);
      expectProblem(await post(base, await tokenFor(sandboxBl, 'read_all')), 403);
      expectProblem(await request('GET', '/events', { op: '/events' }), 401);
    });
  });
});
