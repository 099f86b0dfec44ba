import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_QUANTITY_MAX, DevicesTopic, EARNINGS_MAX, ProgramsTopic, RATE_MAX, type DeviceMessage, type ProgramMessage } from '@efs/contracts';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { battery, captureTopic, evCharger, expectError, expectProgram, fullSite, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

/** A zip code no other test uses. */
let zipSeq = 61000;
const newZip = () => String(zipSeq++);

/**
 * Numbers at the edges (issue 15): a value the API accepts travels on its topic; one the wire
 * could not carry answers 400 naming the field; no rate or quantity makes earnings overflow.
 */
describe.runIf(run)('numeric bounds over HTTP', () => {
  const t = useTestSystem();
  let programs: { value: ProgramMessage }[];
  let devices: { value: DeviceMessage }[];
  beforeAll(async () => {
    programs = await captureTopic<ProgramMessage>(t, ProgramsTopic);
    devices = await captureTopic<DeviceMessage>(t, DevicesTopic);
  });

  const named = (r: { body: any }, path: string) => {
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('/'))).toContain(`body/${path}`);
  };

  it('a battery attribute of 2^53 - 1 answers 400 naming it, at commissioning and when adding a device; nothing is stored', async () => {
    const id = uid('site');
    const r = await t.api.post('/v1/commission', {
      site: fullSite(id),
      devices: [battery(id, uid('bat'), { attributes: { battery_capacity_wh: Number.MAX_SAFE_INTEGER, battery_power_input_w: 1, battery_power_output_w: 1 } })],
      can_auto_enroll: false,
    });
    expectError(r, 400, 'VALIDATION_ERROR');
    named(r, 'devices/0/attributes/battery_capacity_wh');
    expect((await t.api.get('/v1/sites?limit=1000')).body.map((s: { id: string }) => s.id)).not.toContain(id);

    const site = uid('site');
    expect((await t.api.post('/v1/commission', { site: fullSite(site), devices: [], can_auto_enroll: false })).status).toBe(200);
    const add = await t.api.post(`/v1/site/${site}/devices`, evCharger(site, uid('ev'), { attributes: { max_charge_power_w: 7000, phases: Number.MAX_SAFE_INTEGER } }));
    expectError(add, 400, 'VALIDATION_ERROR');
    named(add, 'attributes/phases');
  });

  it('a program rate of 2^31 answers 400 naming it, on create and on update', async () => {
    const body = { name: 'Too rich', eligible_device_types: ['BATTERY'], zip_codes: [newZip()], rates: { upfront_per_kwh: 2 ** 31, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 } };
    const r = await t.utility.post('/v1/programs', body);
    expectError(r, 400, 'VALIDATION_ERROR');
    named(r, 'rates/upfront_per_kwh');

    const created = await t.utility.post('/v1/programs', { ...body, rates: undefined });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const patch = await t.utility.patch(`/v1/programs/${created.body.id}`, { rates: { yearly_per_kw: Number.MAX_SAFE_INTEGER } });
    expectError(patch, 400, 'VALIDATION_ERROR');
    named(patch, 'rates/yearly_per_kw');
    expect((await t.utility.get(`/v1/programs/${created.body.id}`)).body.rates.yearly_per_kw).toBe(0);
  });

  it('the largest rates and quantities are accepted, announced, and give exact earnings at commissioning', async () => {
    const zip = newZip();
    const rates = { upfront_per_kwh: RATE_MAX, upfront_per_device: RATE_MAX, yearly_per_kw: RATE_MAX, yearly_per_device: RATE_MAX };
    const p = await t.utility.post('/v1/programs', { name: 'Richest', eligible_device_types: ['BATTERY'], zip_codes: [zip], rates });
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    await waitFor(() => programs.some((m) => m.value.id === p.body.id && m.value.rates.upfront_per_kwh === RATE_MAX));

    const id = uid('site');
    const big = battery(id, uid('bat'), { attributes: { battery_capacity_wh: DEVICE_QUANTITY_MAX, battery_power_input_w: DEVICE_QUANTITY_MAX, battery_power_output_w: DEVICE_QUANTITY_MAX } });
    const r = await t.api.post('/v1/commission', { site: fullSite(id, { zip_code: zip }), devices: [big], can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.programs).toHaveLength(1);
    expectProgram(r.body.programs[0]);
    expect(r.body.programs[0]).toMatchObject({ id: p.body.id, earnings_for_site_upfront: 1_000_001_000_000, earnings_for_site_yearly: 1_000_001_000_000 });
    await waitFor(() => devices.some((m) => m.value.id === big.id && m.value.attributes.battery_capacity_wh === DEVICE_QUANTITY_MAX));
  });

  it('a program stored with rates of 2^53 - 1 (before the bounds) does not make commissioning at its zip answer 500', async () => {
    const zip = newZip();
    const huge = Number.MAX_SAFE_INTEGER;
    const id = randomUUID();
    const now = new Date();
    // Written straight into the catalog's tables, as such a program would have been kept.
    await t.system.db.knex.withSchema('catalog').table('programs').insert({
      id,
      utility_id: 'legacy-utility',
      name: 'Legacy',
      description: '',
      eligible_device_types: JSON.stringify(['BATTERY']),
      can_auto_enroll: false,
      minimum_reserve_percentage: 0,
      minimum_commitment_months: null,
      participation_months: JSON.stringify([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
      rates: JSON.stringify({ upfront_per_kwh: huge, upfront_per_device: huge, yearly_per_kw: huge, yearly_per_device: huge }),
      enrollment_form: JSON.stringify([]),
      terms_and_conditions_version: null,
      auto_approve_after_ms: null,
      created_at: now,
      updated_at: now,
    });
    await t.system.db.knex.withSchema('catalog').table('program_zip_codes').insert({ program_id: id, zip_code: zip });
    // Such a program was in the store before the catalog started (which is when it reads its programs).
    await t.restart();

    const site = uid('site');
    const r = await t.api.post('/v1/commission', { site: fullSite(site, { zip_code: zip }), devices: [battery(site, uid('bat'))], can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.programs).toHaveLength(1);
    expectProgram(r.body.programs[0]);
    expect(r.body.programs[0]).toMatchObject({ id, earnings_for_site_upfront: EARNINGS_MAX, earnings_for_site_yearly: EARNINGS_MAX });
  });
});
