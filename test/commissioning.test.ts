import { beforeAll, describe, expect, it } from 'vitest';
import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, SitesTopic, type DeviceMessage, type SiteMessage } from '@efs/contracts';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import {
  ISO,
  NO_PROGRAM_ZIP,
  SANDBOX_ZIPS,
  SandboxProgramIds,
  ask,
  asSite,
  battery,
  captureTopic,
  evCharger,
  expectDevice,
  expectError,
  expectProgram,
  expectSiteRecord,
  fullSite,
  uid,
} from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('POST /v1/commission', () => {
  const t = useTestSystem();
  let sitesSeen: { key: string | null; value: SiteMessage }[];
  let devicesSeen: { key: string | null; value: DeviceMessage }[];
  beforeAll(async () => {
    sitesSeen = await captureTopic<SiteMessage>(t, SitesTopic);
    devicesSeen = await captureTopic<DeviceMessage>(t, DevicesTopic);
  });

  const siteIds = async (): Promise<string[]> => {
    const r = await t.api.get('/v1/sites?limit=1000');
    expect(r.status).toBe(200);
    return r.body.map((s: { id: string }) => s.id);
  };

  describe('stores the site and devices and answers the eligible programs', () => {
    it('battery at 88801: both battery programs with earnings from the battery, every field as given', async () => {
      const id = uid('site');
      const site = fullSite(id, { zip_code: '88801' });
      const b = battery(id, uid('bat'));
      const r = await t.api.post('/v1/commission', { site, devices: [b], can_auto_enroll: false });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(Object.keys(r.body)).toEqual(['programs']);
      expect(r.body.programs.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
      for (const p of r.body.programs) expectProgram(p);
      const [flex, capacity] = r.body.programs;
      // 13.5 kWh and 5 kW: Flex pays 10/kWh upfront and 20/kW yearly; Capacity 25/kWh + 50 upfront and 40/kW yearly.
      expect([flex.earnings_for_site_upfront, flex.earnings_for_site_yearly]).toEqual([135, 100]);
      expect([capacity.earnings_for_site_upfront, capacity.earnings_for_site_yearly]).toEqual([388, 200]);
      expect(flex).toMatchObject({ name: 'Sandbox Battery Flex', can_auto_enroll: true, minimum_commitment_months: null, enrollment_form: [], terms_and_conditions_version: null, terms_and_conditions_text: null });
      expect(capacity).toMatchObject({ can_auto_enroll: false, minimum_commitment_months: 12, minimum_reserve_percentage: 20, terms_and_conditions_version: '2026-01-01' });
      expect(capacity.enrollment_form).toEqual([{ name: 'utility_account_number', label: 'Utility account number', type: 'string', hint: 'Printed at the top of your **utility bill**.' }]);

      const listed = (await t.api.get('/v1/sites?limit=1000')).body.find((s: { id: string }) => s.id === id);
      expectSiteRecord(listed, site);
      const app = await asSite(t, id);
      const devices = await app.get(`/v1/site/${id}/devices`);
      expect(devices.status).toBe(200);
      expect(devices.body).toHaveLength(1);
      expectDevice(devices.body[0], b);
      expect(devices.body[0].configuration).toEqual({ reserve_percentage: 0 });
    });

    it.each(SANDBOX_ZIPS)('zip %s matches the sandbox programs for a battery and for an EV charger', async (zip) => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id, zip_code: zip }, devices: [battery(id, uid('bat'))], can_auto_enroll: false });
      expect(r.status).toBe(200);
      expect(r.body.programs.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
      const ev = uid('site');
      const e = await t.api.post('/v1/commission', { site: { id: ev, zip_code: zip }, devices: [evCharger(ev, uid('ev'))], can_auto_enroll: true });
      expect(e.status).toBe(200);
      expect(e.body.programs.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.evSmartCharging]);
      expectProgram(e.body.programs[0]);
      // 11 kW charger: 50 per device upfront; 60 per device plus 5/kW yearly.
      expect([e.body.programs[0].earnings_for_site_upfront, e.body.programs[0].earnings_for_site_yearly]).toEqual([50, 115]);
      // No program permits auto-enrolling an EV charger: no enrollment even though the homeowner agreed.
      expect(e.body).not.toHaveProperty('enrollment');
    });

    it('zip 88803 matches no program, yet the site and devices are commissioned', async () => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id, zip_code: NO_PROGRAM_ZIP }, devices: [battery(id, uid('bat')), evCharger(id, uid('ev'))], can_auto_enroll: true });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ programs: [] });
      expect(await siteIds()).toContain(id);
    });

    it('a site without a zip code has no programs yet', async () => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id }, devices: [battery(id, uid('bat'))], can_auto_enroll: false });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ programs: [] });
    });

    it('a battery and an EV charger: every program that takes one of them, each with earnings from its own device types', async () => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id, zip_code: '88802' }, devices: [battery(id, uid('bat')), evCharger(id, uid('ev'))], can_auto_enroll: false });
      expect(r.status).toBe(200);
      const byId = Object.fromEntries(r.body.programs.map((p: { id: string }) => [p.id, p]));
      expect(Object.keys(byId).sort()).toEqual(Object.values(SandboxProgramIds).sort());
      expect([byId[SandboxProgramIds.batteryAutoEnroll].earnings_for_site_upfront, byId[SandboxProgramIds.batteryAutoEnroll].earnings_for_site_yearly]).toEqual([135, 100]);
      expect([byId[SandboxProgramIds.evSmartCharging].earnings_for_site_upfront, byId[SandboxProgramIds.evSmartCharging].earnings_for_site_yearly]).toEqual([50, 115]);
    });

    it('only id is required of the site; devices may be empty; unknown fields are null', async () => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id }, devices: [], can_auto_enroll: false });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ programs: [] });
      const app = await asSite(t, id);
      const s = await app.get(`/v1/site/${id}`);
      expect(s.status).toBe(200);
      expectSiteRecord(s.body, { id });
      expect((await app.get(`/v1/site/${id}/devices`)).body).toEqual([]);
    });

    it('accepts the deprecated service_account_id (kept) and device configuration (ignored)', async () => {
      const id = uid('site');
      const b = battery(id, uid('bat'), { configuration: { reserve_percentage: 55 } });
      const r = await t.api.post('/v1/commission', { site: { id, service_account_id: 'legacy-123', zip_code: '88800' }, devices: [b], can_auto_enroll: false });
      expect(r.status).toBe(200);
      const app = await asSite(t, id);
      expect((await app.get(`/v1/site/${id}`)).body.service_account_id).toBe('legacy-123');
      const d = (await app.get(`/v1/site/${id}/device/${b.id}`)).body;
      expect(d.configuration).toEqual({ reserve_percentage: 0 });
    });

    it('announces the site and each device on their state topics', async () => {
      const id = uid('site');
      const b = battery(id, uid('bat'));
      const e = evCharger(id, uid('ev'));
      expect((await t.api.post('/v1/commission', { site: fullSite(id), devices: [b, e], can_auto_enroll: false })).status).toBe(200);
      const site = await waitFor(() => sitesSeen.find((m) => m.key === `sandbox-integrator/${id}`), { what: 'site message' });
      expect(site.value).toMatchObject({ integrator_id: 'sandbox-integrator', id, first_name: 'Ada', zip_code: '88801', state_code: 'CA', deleted: false });
      expect(site.value.created_at).toMatch(ISO);
      const dev = await waitFor(() => devicesSeen.find((m) => m.key === `sandbox-integrator/${id}/${e.id}`), { what: 'device message' });
      expect(dev.value).toMatchObject({ integrator_id: 'sandbox-integrator', site_id: id, id: e.id, type: 'EV_CHARGER', attributes: { max_charge_power_w: 11000 }, reserve_percentage: null, deleted: false });
      expect(devicesSeen.some((m) => m.key === `sandbox-integrator/${id}/${b.id}`)).toBe(true);
    });
  });

  describe('auto-enrollment', () => {
    it('without the homeowner agreement (can_auto_enroll false) answers no enrollment', async () => {
      const id = uid('site');
      const r = await t.api.post('/v1/commission', { site: fullSite(id), devices: [battery(id, uid('bat'))], can_auto_enroll: false });
      expect(r.status).toBe(200);
      expect(r.body).not.toHaveProperty('enrollment');
    });

    it('with the agreement and a program that permits it, answers the AUTO_ENROLL enrollment of the eligible devices', async () => {
      const id = uid('site');
      const b = battery(id, uid('bat'));
      const r = await t.api.post('/v1/commission', { site: fullSite(id, { zip_code: '88800' }), devices: [b, evCharger(id, uid('ev'))], can_auto_enroll: true });
      expect(r.status).toBe(200);
      expect(r.body.programs.length).toBe(3);
      const e = r.body.enrollment;
      expect(e, 'enrollment created by the enrollment service').toBeDefined();
      expect(Object.keys(e).sort()).toEqual(
        ['id', 'device_ids', 'site_id', 'program_id', 'enroll_method', 'status', 'status_reason', 'enrolled_at', 'unenrolled_at', 'program_specific_attributes', 'has_agreed_to_terms_and_conditions', 'terms_and_conditions_version'].sort(),
      );
      expect(e).toMatchObject({ site_id: id, program_id: SandboxProgramIds.batteryAutoEnroll, device_ids: [b.id], enroll_method: 'AUTO_ENROLL', status: 'PENDING', unenrolled_at: null });
      expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Array.isArray(e.program_specific_attributes)).toBe(true);
    });

    it('auto-enrolls a site commissioned with only its id and zip code (information is collected later)', async () => {
      for (const zip of ['88800', '88801', '88802']) {
        const id = uid('site');
        const b = battery(id, uid('bat'));
        const r = await t.api.post('/v1/commission', { site: { id, zip_code: zip }, devices: [b], can_auto_enroll: true });
        expect(r.status).toBe(200);
        expect(r.body.enrollment).toMatchObject({ site_id: id, program_id: SandboxProgramIds.batteryAutoEnroll, device_ids: [b.id], enroll_method: 'AUTO_ENROLL', status: 'PENDING' });
      }
    });
  });

  describe('400 VALIDATION_ERROR stores nothing', () => {
    const cases: [string, (id: string) => unknown, string][] = [
      ['can_auto_enroll missing', (id) => ({ site: { id }, devices: [] }), 'can_auto_enroll'],
      ['can_auto_enroll not a boolean', (id) => ({ site: { id }, devices: [], can_auto_enroll: 'yes' }), 'can_auto_enroll'],
      ['devices missing', (id) => ({ site: { id }, can_auto_enroll: false }), 'devices'],
      ['site id missing', () => ({ site: { zip_code: '88801' }, devices: [], can_auto_enroll: false }), 'site/id'],
      ['unknown state_code', (id) => ({ site: { id, state_code: 'ZZ' }, devices: [], can_auto_enroll: false }), 'site/state_code'],
      ['lower-case state_code', (id) => ({ site: { id, state_code: 'ca' }, devices: [], can_auto_enroll: false }), 'site/state_code'],
      ['bad email', (id) => ({ site: { id, email: 'not-an-email' }, devices: [], can_auto_enroll: false }), 'site/email'],
      ['wrong device type', (id) => ({ site: { id }, devices: [{ ...battery(id, uid('d')), type: 'SOLAR' }], can_auto_enroll: false }), 'devices/0/type'],
      ['battery attribute missing', (id) => ({ site: { id }, devices: [battery(id, uid('d'), { attributes: { battery_capacity_wh: 1, battery_power_input_w: 1 } })], can_auto_enroll: false }), 'devices/0/attributes/battery_power_output_w'],
      ['battery attribute not an integer', (id) => ({ site: { id }, devices: [battery(id, uid('d'), { attributes: { battery_capacity_wh: 13.5, battery_power_input_w: 1, battery_power_output_w: 1 } })], can_auto_enroll: false }), 'devices/0/attributes/battery_capacity_wh'],
      ['battery attribute a string', (id) => ({ site: { id }, devices: [battery(id, uid('d'), { attributes: { battery_capacity_wh: '13500', battery_power_input_w: 1, battery_power_output_w: 1 } })], can_auto_enroll: false }), 'devices/0/attributes/battery_capacity_wh'],
      ['EV charger attribute that is not an integer', (id) => ({ site: { id }, devices: [evCharger(id, uid('d'), { attributes: { max_charge_power_w: '7 kW' } })], can_auto_enroll: false }), 'devices/0/attributes/max_charge_power_w'],
      ['attributes missing', (id) => ({ site: { id }, devices: [{ ...battery(id, uid('d')), attributes: undefined }], can_auto_enroll: false }), 'devices/0/attributes'],
      ['install_date not a date-time', (id) => ({ site: { id }, devices: [battery(id, uid('d'), { install_date: 'yesterday' })], can_auto_enroll: false }), 'devices/0/install_date'],
      ['install_date without a time', (id) => ({ site: { id }, devices: [battery(id, uid('d'), { install_date: '2024-05-01' })], can_auto_enroll: false }), 'devices/0/install_date'],
      ['serial_number missing', (id) => ({ site: { id }, devices: [{ ...battery(id, uid('d')), serial_number: undefined }], can_auto_enroll: false }), 'devices/0/serial_number'],
      ['device id missing', (id) => ({ site: { id }, devices: [{ ...battery(id, uid('d')), id: undefined }], can_auto_enroll: false }), 'devices/0/id'],
      ['device.site_id differs from site.id', (id) => ({ site: { id }, devices: [battery(id, uid('d')), battery('another-site', uid('d'))], can_auto_enroll: false }), 'devices/1/site_id'],
      ['the same device id twice', (id) => ({ site: { id }, devices: [battery(id, 'twin'), evCharger(id, 'twin')], can_auto_enroll: false }), 'devices/1/id'],
    ];

    it.each(cases)('%s', async (_name, body, path) => {
      const id = uid('bad');
      const r = await t.api.post('/v1/commission', body(id));
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('/'))).toContain(`body/${path}`);
      expect(await siteIds()).not.toContain(id);
    });

    it('one bad device among good ones leaves no site and no device', async () => {
      const id = uid('bad');
      const good = battery(id, uid('good'));
      const r = await t.api.post('/v1/commission', { site: fullSite(id), devices: [good, battery(id, uid('d'), { attributes: { battery_capacity_wh: 1 } })], can_auto_enroll: true });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(await siteIds()).not.toContain(id);
      // The good device's id is still free: commissioning it now succeeds.
      const again = await t.api.post('/v1/commission', { site: { id }, devices: [good], can_auto_enroll: false });
      expect(again.status).toBe(200);
    });

    it('malformed JSON', async () => {
      const r = await t.api.post('/v1/commission', '{"site": {', { 'content-type': 'application/json' });
      expectError(r, 400, 'VALIDATION_ERROR');
    });
  });

  describe('409 CONFLICT', () => {
    it('a site id the integrator used already; the second request stores none of its devices', async () => {
      const id = uid('site');
      const first = battery(id, uid('bat'));
      expect((await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [first], can_auto_enroll: false })).status).toBe(200);
      const extra = battery(id, uid('bat'));
      const r = await t.api.post('/v1/commission', { site: { id, zip_code: '88802', first_name: 'Other' }, devices: [extra], can_auto_enroll: false });
      expectError(r, 409, 'CONFLICT');
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'site/id' }]);
      const app = await asSite(t, id);
      expect((await app.get(`/v1/site/${id}/devices`)).body.map((d: { id: string }) => d.id)).toEqual([first.id]);
      expect((await app.get(`/v1/site/${id}`)).body).toMatchObject({ zip_code: '88801', first_name: null });
    });

    it('a device id the integrator uses at another site: neither the new site nor its devices are stored', async () => {
      const a = uid('site');
      const shared = battery(a, uid('bat'));
      expect((await t.api.post('/v1/commission', { site: { id: a }, devices: [shared], can_auto_enroll: false })).status).toBe(200);
      const b = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id: b }, devices: [battery(b, uid('new')), { ...shared, site_id: b }], can_auto_enroll: false });
      expectError(r, 409, 'CONFLICT');
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'devices/1/id' }]);
      expect(await siteIds()).not.toContain(b);
    });

    it('conflicts among many concurrent commissions fail alone: every other one is stored and answered as if alone', async () => {
      const taken = uid('site');
      const takenDevice = battery(taken, uid('bat'));
      expect((await t.api.post('/v1/commission', { site: { id: taken }, devices: [takenDevice], can_auto_enroll: false })).status).toBe(200);
      const fine = Array.from({ length: 12 }, () => uid('site'));
      const [x, y] = [uid('site'), uid('site')];
      const shared = uid('shared');
      const bodies = [
        ...fine.map((id) => ({ site: fullSite(id, { zip_code: '88801' }), devices: [battery(id, uid('bat')), battery(id, uid('bat'))], can_auto_enroll: false })),
        { site: { id: taken, zip_code: '88801' }, devices: [battery(taken, uid('bat'))], can_auto_enroll: false },
        ((id) => ({ site: { id }, devices: [battery(id, uid('bat')), { ...takenDevice, site_id: id }], can_auto_enroll: false }))(uid('site')),
        { site: { id: x }, devices: [battery(x, shared)], can_auto_enroll: false },
        { site: { id: y }, devices: [battery(y, shared)], can_auto_enroll: false },
      ];
      const answers = await Promise.all(bodies.map((body) => t.api.post('/v1/commission', body)));
      for (const r of answers.slice(0, 12)) {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.programs.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
      }
      const [siteTaken, deviceTaken, ...sharing] = answers.slice(12);
      expectError(siteTaken!, 409, 'CONFLICT');
      expect(siteTaken!.body.errors).toEqual([{ message: `Site ${taken} exists already`, path: 'site/id' }]);
      expectError(deviceTaken!, 409, 'CONFLICT');
      expect(deviceTaken!.body.errors).toEqual([{ message: `Device ${takenDevice.id} exists already`, path: 'devices/1/id' }]);
      // Two new sites with one new device id: whichever came first has it.
      expect(sharing.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(sharing.find((r) => r.status === 409)!.body.errors).toEqual([{ message: `Device ${shared} exists already`, path: 'devices/0/id' }]);
      const stored = await siteIds();
      for (const id of fine) expect(stored).toContain(id);
      expect(stored.filter((id) => id === x || id === y)).toHaveLength(1);
      expect(stored.filter((id) => id === taken)).toHaveLength(1);
    });

    it('the same site and device ids under another integrator are fine, and stay apart', async () => {
      const id = uid('site');
      const b = battery(id, uid('bat'));
      expect((await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [b], can_auto_enroll: false })).status).toBe(200);
      const other = { kind: 'CLIENT' as const, integrator_id: uid('other-integrator') };
      const r = await ask(t, CommissioningOperations.commission, other, { body: { site: { id, zip_code: '88803', first_name: 'Grace' }, devices: [b], can_auto_enroll: false } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const theirs = await ask(t, CommissioningOperations.listSites, other, { query: {} });
      expect(theirs.body.map((s: { id: string }) => s.id)).toEqual([id]);
      expect(theirs.body[0]).toMatchObject({ zip_code: '88803', first_name: 'Grace' });
      const ours = (await t.api.get('/v1/sites?limit=1000')).body.filter((s: { id: string }) => s.id === id);
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({ zip_code: '88801', first_name: null });
    });
  });

  describe('authentication', () => {
    it('401 without a token', async () => {
      expectError(await t.api.withToken(undefined).post('/v1/commission', { site: { id: 'x' }, devices: [], can_auto_enroll: false }), 401, 'UNAUTHORIZED');
    });

    it('403 with a site token', async () => {
      const id = uid('site');
      expect((await t.api.post('/v1/commission', { site: { id }, devices: [], can_auto_enroll: false })).status).toBe(200);
      const app = await asSite(t, id);
      const other = uid('site');
      expectError(await app.post('/v1/commission', { site: { id: other }, devices: [], can_auto_enroll: false }), 403, 'FORBIDDEN');
      expect(await siteIds()).not.toContain(other);
    });
  });
});
