/**
 * Hostile strings against the whole service over HTTP: a NUL character or an unpaired surrogate
 * in any string field, path segment or query value answers 400 naming the field (never a 500 or
 * 503) and stores nothing; free text has bounded lengths (enrollment-form items, email parts).
 */
import { describe, expect, it } from 'vitest';
import { tierAvailable } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { asSite, battery, evCharger, expectError, fullSite, SandboxProgramIds, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';

/** Sets `value` at a dotted path of a copy of `obj` (numbers index arrays). */
function withValue(obj: unknown, path: string, value: unknown): unknown {
  const copy = structuredClone(obj) as Record<string, unknown>;
  const keys = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys.at(-1)!] = value;
  return copy;
}

describe.runIf(run)('hostile strings and bounded lengths, through the whole service', () => {
  const t = useTestSystem();

  const expectNamed = (r: { status: number; body: any }, loc: string[]) => {
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.detail.map((d: { loc: string[] }) => d.loc), JSON.stringify(r.body)).toContainEqual(loc);
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContainEqual(loc.slice(1).join('/'));
  };

  it('refuses NUL and lone surrogates in every string field of a commissioning, and stores nothing', async () => {
    const fields = [
      'site.id', 'site.first_name', 'site.last_name', 'site.company_name', 'site.email', 'site.city', 'site.zip_code',
      'site.street_address', 'site.street_address2', 'site.service_account_id',
      'devices.0.id', 'devices.0.site_id', 'devices.0.manufacturer_name', 'devices.0.product_name', 'devices.0.serial_number', 'devices.0.install_date',
    ];
    for (const bad of [NUL, LONE]) {
      for (const field of fields) {
        const siteId = uid('hostile');
        const body = withValue({ site: fullSite(siteId), devices: [battery(siteId, uid('bat'))], can_auto_enroll: false }, field, bad);
        const r = await t.api.post('/v1/commission', body);
        expectNamed(r, ['body', ...field.split('.')]);
        expect((await t.api.post(`/v1/auth/site/${siteId}`)).status, field).toBe(404);
      }
    }
    // A key of free JSON (an EV charger's attribute name, the deprecated configuration) too.
    const siteId = uid('hostile');
    const key = await t.api.post('/v1/commission', { site: fullSite(siteId), devices: [evCharger(siteId, uid('ev'), { attributes: { ['x\u0000']: 1 } })], can_auto_enroll: false });
    expectError(key, 400, 'VALIDATION_ERROR');
    expect(key.body.detail[0].loc).toEqual(['body', 'devices', '0', 'attributes', 'x\\u0000']);
    const config = await t.api.post('/v1/commission', { site: fullSite(siteId), devices: [battery(siteId, uid('bat'), { configuration: { note: LONE } })], can_auto_enroll: false });
    expectNamed(config, ['body', 'devices', '0', 'configuration', 'note']);
    expect((await t.api.get('/v1/sites?limit=1000')).body.filter((s: { id: string }) => s.id.startsWith('hostile'))).toEqual([]);
  });

  it('refuses them in path segments and query values of every kind of route, and in updates, leaving the site as it was', async () => {
    const siteId = uid('host');
    const deviceId = uid('bat');
    expect((await t.api.post('/v1/commission', { site: fullSite(siteId), devices: [battery(siteId, deviceId)], can_auto_enroll: false })).status).toBe(200);
    const site = await asSite(t, siteId);
    expectNamed(await t.api.post('/v1/auth/site/a%00b'), ['path', 'siteId']);
    expectNamed(await site.get(`/v1/site/${siteId}/device/x%00y`), ['path', 'deviceId']);
    expectNamed(await site.get(`/v1/site/${siteId}/programs?zip_code=888%0001`), ['query', 'zip_code']);
    expectNamed(await t.api.get(`/v1/programs?zip_code=${encodeURIComponent('8\u0000')}`), ['query', 'zip_code']);
    expectNamed(await t.utility.get(`/v1/enrollments?program_id=${encodeURIComponent(NUL)}`), ['query', 'program_id']);
    expectNamed(await t.utility.get(`/v1/programs/${encodeURIComponent(NUL)}`), ['path', 'id']);

    const before = (await site.get(`/v1/site/${siteId}`)).body;
    for (const field of ['city', 'first_name', 'zip_code', 'street_address']) {
      for (const bad of [NUL, LONE]) expectNamed(await site.patch(`/v1/site/${siteId}`, { [field]: bad }), ['body', field]);
    }
    expectNamed(await site.patch(`/v1/site/${siteId}/device/${deviceId}`, { serial_number: LONE }), ['body', 'serial_number']);
    expectNamed(await t.api.post('/v1/supplements', { site_id: siteId, data: { [`k${LONE}`]: 'v' } }), ['body', 'data', 'ka\uFFFDb']);
    expectNamed(await t.api.post('/v1/supplements', { site_id: siteId, data: { note: NUL } }), ['body', 'data', 'note']);
    expect((await site.get(`/v1/site/${siteId}`)).body).toEqual(before);
  });

  it('refuses them in enrollments and utility programs', async () => {
    const siteId = uid('host');
    const deviceId = uid('bat');
    expect((await t.api.post('/v1/commission', { site: fullSite(siteId), devices: [battery(siteId, deviceId)], can_auto_enroll: false })).status).toBe(200);
    const site = await asSite(t, siteId);
    const enroll = { program_id: SandboxProgramIds.batteryAutoEnroll, device_ids: [deviceId] };
    expectNamed(await site.post(`/v1/site/${siteId}/enrollments`, { ...enroll, device_ids: [NUL] }), ['body', 'device_ids', '0']);
    expectNamed(await site.post(`/v1/site/${siteId}/enrollments`, { ...enroll, program_specific_attributes: [{ name: 'a', value: LONE }] }), ['body', 'program_specific_attributes', '0', 'value']);
    expect((await site.get(`/v1/site/${siteId}/enrollments`)).body).toEqual([]);

    const program = { name: 'Hostile', eligible_device_types: ['BATTERY'], zip_codes: ['12345'] };
    for (const [field, value] of [
      ['name', NUL],
      ['description', LONE],
      ['terms_and_conditions_text', NUL],
      ['enrollment_form.0.hint', LONE],
    ] as const) {
      const body = withValue({ ...program, enrollment_form: [{ name: 'meter', label: 'Meter', type: 'string', hint: '' }] }, field, value);
      expectNamed(await t.utility.post('/v1/programs', body), ['body', ...field.split('.')]);
    }
    expect((await t.utility.get('/v1/programs')).body.filter((p: { name: string }) => p.name === 'Hostile')).toEqual([]);
  });

  it('bounds enrollment-form items and the parts of an email address', async () => {
    const form = (item: Record<string, unknown>) => ({
      name: 'Bounded', eligible_device_types: ['BATTERY'], zip_codes: ['12345'],
      enrollment_form: [{ name: 'meter', label: 'Meter', type: 'string', hint: '', ...item }],
    });
    expectNamed(await t.utility.post('/v1/programs', form({ name: 'n'.repeat(201) })), ['body', 'enrollment_form', '0', 'name']);
    expectNamed(await t.utility.post('/v1/programs', form({ label: 'l'.repeat(256) })), ['body', 'enrollment_form', '0', 'label']);
    expectNamed(await t.utility.post('/v1/programs', form({ hint: 'h'.repeat(100_000) })), ['body', 'enrollment_form', '0', 'hint']);
    const fits = await t.utility.post('/v1/programs', form({ name: 'n'.repeat(200), label: 'l'.repeat(255), hint: 'h'.repeat(2000) }));
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);

    const siteId = uid('mail');
    const commission = (email: string) => t.api.post('/v1/commission', { site: fullSite(siteId, { email }), devices: [], can_auto_enroll: false });
    expectNamed(await commission(`${'a'.repeat(310)}@example.com`), ['body', 'site', 'email']);
    expectNamed(await commission(`${'a'.repeat(65)}@example.com`), ['body', 'site', 'email']);
    expectNamed(await commission(`a@${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.${'g'.repeat(60)}.${'h'.repeat(20)}.com`), ['body', 'site', 'email']);
    expect((await commission(`${'a'.repeat(64)}@example.com`)).status).toBe(200);
    const site = await asSite(t, siteId);
    expectNamed(await site.patch(`/v1/site/${siteId}`, { email: `${'b'.repeat(65)}@example.com` }), ['body', 'email']);
    expect((await site.get(`/v1/site/${siteId}`)).body.email).toBe(`${'a'.repeat(64)}@example.com`);
  });
});
