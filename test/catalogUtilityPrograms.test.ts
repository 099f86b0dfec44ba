import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogOperations } from '@efs/api';
import { ProgramsTopic, type ProgramMessage } from '@efs/contracts';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { ISO, SandboxProgramIds, ask, asSite, battery, captureTopic, evCharger, expectError, expectProgram, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');
const UTILITY_PROGRAM_KEYS = [
  'id', 'name', 'description', 'eligible_device_types', 'zip_codes', 'can_auto_enroll', 'minimum_reserve_percentage', 'minimum_commitment_months',
  'participation_months', 'rates', 'enrollment_form', 'terms_and_conditions_version', 'terms_and_conditions_text', 'created_at', 'updated_at',
].sort();
const expectUtilityProgram = (p: any) => {
  expect(Object.keys(p).sort()).toEqual(UTILITY_PROGRAM_KEYS);
  expect(Object.keys(p.rates).sort()).toEqual(['upfront_per_device', 'upfront_per_kwh', 'yearly_per_device', 'yearly_per_kw']);
  expect(p.created_at).toMatch(ISO);
  expect(p.updated_at).toMatch(ISO);
};

/** A fresh zip code per program, so programs of different tests never meet. */
let zipSeq = 70000;
const newZip = () => String(zipSeq++);

describe.runIf(run)('utility API: GET/POST /v1/programs, GET/PATCH /v1/programs/{id}', () => {
  const t = useTestSystem();
  let announced: { key: string | null; value: ProgramMessage }[];
  beforeAll(async () => {
    announced = await captureTopic<ProgramMessage>(t, ProgramsTopic);
  });

  const create = async (body: Record<string, unknown>) => {
    const r = await t.utility.post('/v1/programs', body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  it("lists the utility's own programs: the sandbox catalog with coverage and rates", async () => {
    const r = await t.utility.get('/v1/programs');
    expect(r.status).toBe(200);
    const sandbox = r.body.filter((p: { id: string }) => Object.values(SandboxProgramIds).includes(p.id as never));
    expect(sandbox.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity, SandboxProgramIds.evSmartCharging]);
    for (const p of sandbox) {
      expectUtilityProgram(p);
      expect(p.zip_codes).toEqual(['88800', '88801', '88802']);
    }
    expect(sandbox[1]).toMatchObject({ rates: { upfront_per_kwh: 25, upfront_per_device: 50, yearly_per_kw: 40, yearly_per_device: 0 }, terms_and_conditions_version: '2026-01-01' });
  });

  it('creates a program with defaults; integrators see it for its zip codes; announced on the programs topic', async () => {
    const zip = newZip();
    const p = await create({ name: 'Summer Peak', eligible_device_types: ['BATTERY'], zip_codes: [zip] });
    expectUtilityProgram(p);
    expect(p).toMatchObject({
      name: 'Summer Peak', description: '', eligible_device_types: ['BATTERY'], zip_codes: [zip], can_auto_enroll: false, minimum_reserve_percentage: 0,
      minimum_commitment_months: null, participation_months: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], enrollment_form: [],
      rates: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 }, terms_and_conditions_version: null, terms_and_conditions_text: null,
    });
    expect((await t.utility.get(`/v1/programs/${p.id}`)).body).toEqual(p);
    const listed = await t.api.get(`/v1/programs?zip_code=${zip}`);
    expect(listed.body.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expectProgram(listed.body[0]);
    const m = await waitFor(() => announced.find((x) => x.key === p.id), { what: 'program message' });
    expect(m.value).toMatchObject({ id: p.id, utility_id: 'sandbox-utility', zip_codes: [zip], name: 'Summer Peak', auto_approve_after_ms: null });
  });

  it('a new program with terms gets its first version; commissioning at its zip offers it with earnings from its rates', async () => {
    const zip = newZip();
    const p = await create({
      name: 'EV Nights', description: 'Charge at night.', eligible_device_types: ['EV_CHARGER', 'BATTERY'], zip_codes: [zip, zip], can_auto_enroll: false,
      minimum_reserve_percentage: 15, minimum_commitment_months: 6, participation_months: [12, 1, 2],
      rates: { upfront_per_kwh: 2, upfront_per_device: 30, yearly_per_kw: 10, yearly_per_device: 5 },
      enrollment_form: [{ name: 'meter_id', label: 'Meter id', type: 'string', hint: 'On your **meter**.' }], terms_and_conditions_text: '# Terms\n\nBe nice.',
    });
    expect(p).toMatchObject({ zip_codes: [zip], participation_months: [1, 2, 12], terms_and_conditions_version: 'v1', terms_and_conditions_text: '# Terms\n\nBe nice.', minimum_commitment_months: 6 });
    const id = uid('site');
    const r = await t.api.post('/v1/commission', { site: { id, zip_code: zip }, devices: [evCharger(id, uid('ev'))], can_auto_enroll: true });
    expect(r.status).toBe(200);
    expect(r.body.programs).toHaveLength(1);
    expectProgram(r.body.programs[0]);
    // 11 kW charger: 30 upfront per device (no battery capacity), 5 per device + 10/kW yearly.
    expect(r.body.programs[0]).toMatchObject({ id: p.id, earnings_for_site_upfront: 30, earnings_for_site_yearly: 115, terms_and_conditions_version: 'v1' });
  });

  it.each([
    ['name missing', { eligible_device_types: ['BATTERY'], zip_codes: ['12345'] }, 'name'],
    ['unknown device type', { name: 'x', eligible_device_types: ['SOLAR'], zip_codes: ['12345'] }, 'eligible_device_types/0'],
    ['no zip codes', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: [] }, 'zip_codes'],
    ['malformed zip code', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['ABCDE'] }, 'zip_codes/0'],
    ['month 13', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['12345'], participation_months: [13] }, 'participation_months/0'],
    ['reserve over 100', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['12345'], minimum_reserve_percentage: 101 }, 'minimum_reserve_percentage'],
    ['negative rate', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['12345'], rates: { upfront_per_kwh: -1, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 } }, 'rates/upfront_per_kwh'],
    ['unknown form item type', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['12345'], enrollment_form: [{ name: 'a', label: 'A', type: 'date', hint: '' }] }, 'enrollment_form/0/type'],
  ])('400 for %s; nothing created', async (_n, body, path) => {
    const before = (await t.utility.get('/v1/programs?limit=1000')).body.length;
    const r = await t.utility.post('/v1/programs', body);
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await t.utility.get('/v1/programs?limit=1000')).body.length).toBe(before);
  });

  it('PATCH changes the given fields; a change of the terms text issues a new version; each change is announced', async () => {
    const zip = newZip();
    const p = await create({ name: 'Flex', eligible_device_types: ['BATTERY'], zip_codes: [zip], terms_and_conditions_text: 'v1 text', rates: { upfront_per_kwh: 1, upfront_per_device: 2, yearly_per_kw: 3, yearly_per_device: 4 } });
    expect(p.terms_and_conditions_version).toBe('v1');
    const listed = async () => (await t.api.get(`/v1/programs?zip_code=${zip}`)).body as { name: string }[];
    expect((await listed()).map((x) => x.name)).toEqual(['Flex']);
    const renamed = await t.utility.patch(`/v1/programs/${p.id}`, { name: 'Flex Plus', rates: { yearly_per_kw: 9 }, can_auto_enroll: true });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    // A list asked before the change shows it after.
    expect((await listed()).map((x) => x.name)).toEqual(['Flex Plus']);
    expect(renamed.body).toMatchObject({ name: 'Flex Plus', can_auto_enroll: true, rates: { upfront_per_kwh: 1, upfront_per_device: 2, yearly_per_kw: 9, yearly_per_device: 4 }, terms_and_conditions_version: 'v1', created_at: p.created_at });
    expect(renamed.body.updated_at).not.toBe(p.updated_at);
    const sameText = await t.utility.patch(`/v1/programs/${p.id}`, { terms_and_conditions_text: 'v1 text' });
    expect(sameText.body).toEqual(renamed.body);
    const v2 = await t.utility.patch(`/v1/programs/${p.id}`, { terms_and_conditions_text: 'v2 text' });
    expect(v2.body).toMatchObject({ terms_and_conditions_version: 'v2', terms_and_conditions_text: 'v2 text' });
    const none = await t.utility.patch(`/v1/programs/${p.id}`, { terms_and_conditions_text: null });
    expect(none.body).toMatchObject({ terms_and_conditions_version: null, terms_and_conditions_text: null });
    const v3 = await t.utility.patch(`/v1/programs/${p.id}`, { terms_and_conditions_text: 'v1 text' });
    expect(v3.body).toMatchObject({ terms_and_conditions_version: 'v3', terms_and_conditions_text: 'v1 text' });
    // What the site's user sees follows.
    const siteId = uid('site');
    expect((await t.api.post('/v1/commission', { site: { id: siteId, zip_code: zip }, devices: [battery(siteId, uid('b'))], can_auto_enroll: false })).status).toBe(200);
    const seen = await (await asSite(t, siteId)).get(`/v1/site/${siteId}/program/${p.id}`);
    expect(seen.body).toMatchObject({ name: 'Flex Plus', terms_and_conditions_version: 'v3', terms_and_conditions_text: 'v1 text' });
    const versions = await waitFor(() => {
      const v = announced.filter((x) => x.key === p.id).map((x) => x.value.terms_and_conditions_version);
      return v.length >= 5 ? v : undefined;
    }, { what: 'every change announced' });
    expect(versions).toEqual(['v1', 'v1', 'v2', null, 'v3']);
  });

  it('PATCH of zip codes moves the coverage', async () => {
    const [a, b] = [newZip(), newZip()];
    const p = await create({ name: 'Mover', eligible_device_types: ['BATTERY'], zip_codes: [a] });
    // The same questions asked before the change (answers the catalog keeps) are answered anew after it.
    expect((await t.api.get(`/v1/programs?zip_code=${a}`)).body.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect((await t.api.get(`/v1/programs?zip_code=${b}`)).body).toEqual([]);
    const r = await t.utility.patch(`/v1/programs/${p.id}`, { zip_codes: [b] });
    expect(r.body.zip_codes).toEqual([b]);
    expect((await t.api.get(`/v1/programs?zip_code=${a}`)).body).toEqual([]);
    expect((await t.api.get(`/v1/programs?zip_code=${b}`)).body.map((x: { id: string }) => x.id)).toEqual([p.id]);
  });

  it('PATCH validates: 400 for bad values or unknown fields, nothing changed', async () => {
    const p = await create({ name: 'Strict', eligible_device_types: ['BATTERY'], zip_codes: [newZip()] });
    for (const body of [{ participation_months: [0] }, { eligible_device_types: [] }, { id: '5a0d0b7e-0000-4000-8000-00000000beef' }, { name: '' }]) {
      expectError(await t.utility.patch(`/v1/programs/${p.id}`, body), 400, 'VALIDATION_ERROR');
    }
    expect((await t.utility.get(`/v1/programs/${p.id}`)).body).toEqual(p);
  });

  it("another utility's program is 404 for reading and changing; a utility sees only its own", async () => {
    const other = { kind: 'UTILITY' as const, utility_id: uid('other-utility') };
    const theirs = await ask(t, CatalogOperations.createUtilityProgram, other, { body: { name: 'Theirs', eligible_device_types: ['BATTERY'], zip_codes: [newZip()] } });
    expect(theirs.status).toBe(200);
    expectError(await t.utility.get(`/v1/programs/${theirs.body.id}`), 404, 'NOT_FOUND');
    expectError(await t.utility.patch(`/v1/programs/${theirs.body.id}`, { name: 'Mine now' }), 404, 'NOT_FOUND');
    expect((await t.utility.get('/v1/programs?limit=1000')).body.map((p: { id: string }) => p.id)).not.toContain(theirs.body.id);
    const sandboxAsOther = await ask(t, CatalogOperations.updateUtilityProgram, other, { params: { id: SandboxProgramIds.batteryCapacity }, body: { name: 'Hijacked' } });
    expect(sandboxAsOther.status).toBe(404);
    expect((await ask(t, CatalogOperations.listUtilityPrograms, other, {})).body.map((p: { id: string }) => p.id)).toEqual([theirs.body.id]);
    expectError(await t.utility.get('/v1/programs/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await t.utility.get('/v1/programs/not-a-uuid'), 400, 'VALIDATION_ERROR');
  });

  it('401 without a key; 403 for a client token on the utility listener', async () => {
    expectError(await t.utility.withToken(undefined).get('/v1/programs'), 401, 'UNAUTHORIZED');
    expectError(await t.utility.withToken('efs_ct_test_sandbox_client_token_000000000000').post('/v1/programs', { name: 'x', eligible_device_types: ['BATTERY'], zip_codes: ['12345'] }), 403, 'FORBIDDEN');
  });
});

describe.runIf(run)('the catalog answers reads from memory, loaded from its store', () => {
  const t = useTestSystem();

  it('answers the same catalog after a restart, utility changes included, in the same order', async () => {
    const zip = newZip();
    const first = (await t.utility.post('/v1/programs', { name: 'Before restart', eligible_device_types: ['BATTERY'], zip_codes: [zip, '70999'] })).body;
    const second = (await t.utility.post('/v1/programs', { name: 'Changed', eligible_device_types: ['EV_CHARGER'], zip_codes: [zip] })).body;
    expect((await t.utility.patch(`/v1/programs/${second.id}`, { name: 'Changed twice', terms_and_conditions_text: 'v1' })).status).toBe(200);
    const paths = ['/v1/programs?limit=1000', `/v1/programs?zip_code=${zip}`, `/v1/programs?zip_code=${zip}&device_type=EV_CHARGER`, '/v1/programs?skip=1&limit=2'];
    const before = await Promise.all(paths.map(async (p) => (await t.api.get(p)).body));
    const utilityBefore = (await t.utility.get('/v1/programs?limit=1000')).body;
    expect(before[1].map((p: { id: string }) => p.id)).toEqual([first.id, second.id]);
    expect(before[2].map((p: { name: string }) => p.name)).toEqual(['Changed twice']);

    await t.restart();
    expect(await Promise.all(paths.map(async (p) => (await t.api.get(p)).body))).toEqual(before);
    expect((await t.utility.get('/v1/programs?limit=1000')).body).toEqual(utilityBefore);
    expect((await t.utility.get(`/v1/programs/${second.id}`)).body).toMatchObject({ name: 'Changed twice', terms_and_conditions_text: 'v1' });
  });
});
