import { beforeAll, describe, expect, it } from 'vitest';
import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, SupplementsTopic, type DeviceMessage, type SupplementMessage } from '@efs/contracts';
import { tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { ISO, ask, asSite, battery, captureTopic, evCharger, expectDevice, expectError, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.runIf(run)('devices: POST /v1/site/{siteId}/devices, GET, PATCH, DELETE; POST /v1/supplements', () => {
  const t = useTestSystem();
  let devicesSeen: { key: string | null; value: DeviceMessage }[];
  let supplementsSeen: { key: string | null; value: SupplementMessage }[];
  beforeAll(async () => {
    devicesSeen = await captureTopic<DeviceMessage>(t, DevicesTopic);
    supplementsSeen = await captureTopic<SupplementMessage>(t, SupplementsTopic);
  });

  /** A commissioned site with one battery, and the end user's client for it. */
  const newSite = async (): Promise<{ id: string; deviceId: string; app: ApiClient }> => {
    const id = uid('site');
    const deviceId = uid('bat');
    const r = await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [battery(id, deviceId)], can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { id, deviceId, app: await asSite(t, id) };
  };
  const deviceIds = async (s: { id: string; app: ApiClient }) => (await s.app.get(`/v1/site/${s.id}/devices`)).body.map((d: { id: string }) => d.id);

  describe('POST /v1/site/{siteId}/devices', () => {
    it('with a client token and only the required fields: an id is generated, the rest null, configuration present', async () => {
      const s = await newSite();
      const input = { site_id: s.id, type: 'BATTERY', attributes: { battery_capacity_wh: 10000, battery_power_input_w: 3000, battery_power_output_w: 4000 }, install_date: '2025-01-02T03:04:05+02:00' };
      const r = await t.api.post(`/v1/site/${s.id}/devices`, input);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expectDevice(r.body, input);
      expect(r.body.id).toMatch(UUID);
      expect(r.body.configuration).toEqual({ reserve_percentage: 0 });
      expect(r.body.install_date).toBe('2025-01-02T01:04:05.000Z');
      expect(r.body.created_at).toBe(r.body.updated_at);
      expect(await deviceIds(s)).toEqual([s.deviceId, r.body.id]);
      const m = await waitFor(() => devicesSeen.find((x) => x.key === `sandbox-integrator/${s.id}/${r.body.id}`), { what: 'device message' });
      expect(m.value).toMatchObject({ id: r.body.id, site_id: s.id, type: 'BATTERY', manufacturer_name: null, attributes: input.attributes, deleted: false });
    });

    it('with a site token and every field: the deprecated configuration is accepted and ignored', async () => {
      const s = await newSite();
      const input = evCharger(s.id, uid('ev'), { configuration: { reserve_percentage: 80 } });
      const r = await s.app.post(`/v1/site/${s.id}/devices`, input);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expectDevice(r.body, input);
      expect(r.body.configuration).toEqual({ reserve_percentage: 0 });
      const read = await s.app.get(`/v1/site/${s.id}/device/${input.id}`);
      expect(read.body).toEqual(r.body);
    });

    const bad: [string, (siteId: string) => Record<string, unknown>, string][] = [
      ['site_id missing', (id) => ({ ...battery(id, uid('d')), site_id: undefined }), 'site_id'],
      ['type missing', (id) => ({ ...battery(id, uid('d')), type: undefined }), 'type'],
      ['attributes missing', (id) => ({ ...battery(id, uid('d')), attributes: undefined }), 'attributes'],
      ['install_date missing', (id) => ({ ...battery(id, uid('d')), install_date: undefined }), 'install_date'],
      ['wrong type', (id) => ({ ...battery(id, uid('d')), type: 'HEAT_PUMP' }), 'type'],
      ['battery attribute not an integer', (id) => battery(id, uid('d'), { attributes: { battery_capacity_wh: 1, battery_power_input_w: 2.5, battery_power_output_w: 1 } }), 'attributes/battery_power_input_w'],
      ['battery attribute negative', (id) => battery(id, uid('d'), { attributes: { battery_capacity_wh: -1, battery_power_input_w: 1, battery_power_output_w: 1 } }), 'attributes/battery_capacity_wh'],
      ['EV charger attribute not an integer', (id) => evCharger(id, uid('d'), { attributes: { max_charge_power_w: 7.5 } }), 'attributes/max_charge_power_w'],
      ['EV charger attribute not a number', (id) => evCharger(id, uid('d'), { attributes: { phases: 'three' } }), 'attributes/phases'],
      ['bad install_date', (id) => battery(id, uid('d'), { install_date: '2024-13-45T00:00:00Z' }), 'install_date'],
      ['site_id of another site', () => battery('some-other-site', uid('d')), 'site_id'],
      ['empty id', (id) => battery(id, ''), 'id'],
    ];
    it.each(bad)('400 for %s, nothing stored', async (_n, body, path) => {
      const s = await newSite();
      const r = await t.api.post(`/v1/site/${s.id}/devices`, body(s.id));
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      expect(await deviceIds(s)).toEqual([s.deviceId]);
    });

    it('accepts an EV charger without attributes, or with integer ones the specification does not name', async () => {
      const s = await newSite();
      for (const attributes of [{}, { phases: 3, max_charge_power_w: 11_000 }]) {
        const r = await t.api.post(`/v1/site/${s.id}/devices`, evCharger(s.id, uid('d'), { attributes }));
        expect(r.status).toBe(200);
        expect(r.body.attributes).toEqual(attributes);
      }
    });

    it('409 for an id used at this site or at another site of the integrator; fine for another integrator', async () => {
      const s = await newSite();
      const other = await newSite();
      const same = await t.api.post(`/v1/site/${s.id}/devices`, battery(s.id, s.deviceId));
      expectError(same, 409, 'CONFLICT');
      expect(same.body.errors).toEqual([{ message: expect.any(String), path: 'id' }]);
      expectError(await s.app.post(`/v1/site/${s.id}/devices`, battery(s.id, other.deviceId)), 409, 'CONFLICT');
      expect(await deviceIds(s)).toEqual([s.deviceId]);
      const foreign = { kind: 'CLIENT' as const, integrator_id: uid('other-integrator') };
      expect((await ask(t, CommissioningOperations.commission, foreign, { body: { site: { id: s.id }, devices: [], can_auto_enroll: false } })).status).toBe(200);
      const theirs = await ask(t, CommissioningOperations.createDevice, foreign, { params: { siteId: s.id }, body: battery(s.id, s.deviceId) });
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    });

    it('404 for an unknown site (client token); 403 for another site\'s token', async () => {
      const ghost = uid('ghost');
      expectError(await t.api.post(`/v1/site/${ghost}/devices`, battery(ghost, uid('d'))), 404, 'NOT_FOUND');
      const a = await newSite();
      const b = await newSite();
      expectError(await b.app.post(`/v1/site/${a.id}/devices`, battery(a.id, uid('d'))), 403, 'FORBIDDEN');
    });
  });

  describe('GET /v1/site/{siteId}/devices and /device/{deviceId}', () => {
    it('lists the devices oldest first with pagination, and reads one', async () => {
      const s = await newSite();
      const ev = evCharger(s.id, uid('ev'));
      expect((await s.app.post(`/v1/site/${s.id}/devices`, ev)).status).toBe(200);
      const list = await s.app.get(`/v1/site/${s.id}/devices`);
      expect(list.status).toBe(200);
      expect(list.body.map((d: { id: string }) => d.id)).toEqual([s.deviceId, ev.id]);
      expectDevice(list.body[1], ev);
      expect((await s.app.get(`/v1/site/${s.id}/devices?skip=1&limit=1`)).body.map((d: { id: string }) => d.id)).toEqual([ev.id]);
      expectError(await s.app.get(`/v1/site/${s.id}/devices?limit=5000`), 400, 'VALIDATION_ERROR');
      const one = await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`);
      expect(one.status).toBe(200);
      expectDevice(one.body, battery(s.id, s.deviceId));
    });

    it('404 for an unknown device and for a device of another site; 403 for a client token', async () => {
      const s = await newSite();
      const other = await newSite();
      expectError(await s.app.get(`/v1/site/${s.id}/device/${uid('nope')}`), 404, 'NOT_FOUND');
      expectError(await s.app.get(`/v1/site/${s.id}/device/${other.deviceId}`), 404, 'NOT_FOUND');
      expectError(await t.api.get(`/v1/site/${s.id}/devices`), 403, 'FORBIDDEN');
      expectError(await t.api.get(`/v1/site/${s.id}/device/${s.deviceId}`), 403, 'FORBIDDEN');
    });
  });

  describe('PATCH /v1/site/{siteId}/device/{deviceId}', () => {
    it('changes descriptive fields and install_date; configuration is ignored; announced', async () => {
      const s = await newSite();
      const before = (await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`)).body;
      const r = await s.app.patch(`/v1/site/${s.id}/device/${s.deviceId}`, { product_name: 'PowerWall 9001', serial_number: null, install_date: '2024-07-01T00:00:00Z', configuration: { reserve_percentage: 30 } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ ...before, product_name: 'PowerWall 9001', serial_number: null, install_date: '2024-07-01T00:00:00.000Z', updated_at: expect.stringMatching(ISO) });
      expect(r.body.configuration).toEqual({ reserve_percentage: 0 });
      expect(r.body.updated_at).not.toBe(before.updated_at);
      expect((await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`)).body).toEqual(r.body);
      await waitFor(() => devicesSeen.find((x) => x.value.id === s.deviceId && x.value.product_name === 'PowerWall 9001'), { what: 'device update message' });
    });

    it.each([
      ['attributes (set at installation)', { attributes: { battery_capacity_wh: 1, battery_power_input_w: 1, battery_power_output_w: 1 } }],
      ['type', { type: 'EV_CHARGER' }],
      ['a bad install_date', { install_date: 'soon' }],
    ])('400 for %s, nothing changed', async (_n, patch) => {
      const s = await newSite();
      const before = (await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`)).body;
      expectError(await s.app.patch(`/v1/site/${s.id}/device/${s.deviceId}`, { product_name: 'x', ...patch }), 400, 'VALIDATION_ERROR');
      expect((await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`)).body).toEqual(before);
    });

    it('404 for an unknown device', async () => {
      const s = await newSite();
      expectError(await s.app.patch(`/v1/site/${s.id}/device/${uid('nope')}`, { product_name: 'x' }), 404, 'NOT_FOUND');
    });
  });

  describe('DELETE /v1/site/{siteId}/device/{deviceId}', () => {
    it('answers the device as it was, removes it, announces a tombstone; the id can be used again', async () => {
      const s = await newSite();
      const before = (await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`)).body;
      const r = await s.app.delete(`/v1/site/${s.id}/device/${s.deviceId}`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual(before);
      expectError(await s.app.get(`/v1/site/${s.id}/device/${s.deviceId}`), 404, 'NOT_FOUND');
      expect(await deviceIds(s)).toEqual([]);
      expectError(await s.app.delete(`/v1/site/${s.id}/device/${s.deviceId}`), 404, 'NOT_FOUND');
      const tomb = await waitFor(() => devicesSeen.find((x) => x.value.id === s.deviceId && x.value.deleted), { what: 'tombstone' });
      expect(new Date(tomb.value.updated_at).getTime()).toBeGreaterThan(new Date(before.updated_at).getTime());
      expect((await s.app.post(`/v1/site/${s.id}/devices`, battery(s.id, s.deviceId))).status).toBe(200);
    });

    it('403 for a client token', async () => {
      const s = await newSite();
      expectError(await t.api.delete(`/v1/site/${s.id}/device/${s.deviceId}`), 403, 'FORBIDDEN');
      expect(await deviceIds(s)).toEqual([s.deviceId]);
    });
  });

  describe('POST /v1/supplements (client token)', () => {
    it('stores data for a site, and for one of its devices, and announces it', async () => {
      const s = await newSite();
      const r = await t.api.post('/v1/supplements', { site_id: s.id, data: { utility_account_number: '123-456', meter: { id: 7 } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['created_at', 'data', 'device_id', 'id', 'site_id']);
      expect(r.body).toMatchObject({ site_id: s.id, device_id: null, data: { utility_account_number: '123-456', meter: { id: 7 } } });
      expect(r.body.id).toMatch(UUID);
      expect(r.body.created_at).toMatch(ISO);
      const withDevice = await t.api.post('/v1/supplements', { site_id: s.id, device_id: s.deviceId, data: { interconnection_date: '2024-01-01' } });
      expect(withDevice.status).toBe(200);
      expect(withDevice.body.device_id).toBe(s.deviceId);
      const m = await waitFor(() => supplementsSeen.find((x) => x.value.id === r.body.id), { what: 'supplement message' });
      expect(m.key).toBe(`sandbox-integrator/${s.id}`);
      expect(m.value).toMatchObject({ integrator_id: 'sandbox-integrator', site_id: s.id, device_id: null, data: { utility_account_number: '"123-456"', meter: '{"id":7}' } });
    });

    it('404 for an unknown site or a device of another site; 400 without data; 403 for a site token', async () => {
      const s = await newSite();
      const other = await newSite();
      const ghost = await t.api.post('/v1/supplements', { site_id: uid('ghost'), data: { a: 1 } });
      expectError(ghost, 404, 'NOT_FOUND');
      expect(ghost.body.errors[0].path).toBe('site_id');
      const foreign = await t.api.post('/v1/supplements', { site_id: s.id, device_id: other.deviceId, data: { a: 1 } });
      expectError(foreign, 404, 'NOT_FOUND');
      expect(foreign.body.errors[0].path).toBe('device_id');
      expectError(await t.api.post('/v1/supplements', { site_id: s.id }), 400, 'VALIDATION_ERROR');
      expectError(await t.api.post('/v1/supplements', { site_id: s.id, data: 'text' }), 400, 'VALIDATION_ERROR');
      expectError(await s.app.post('/v1/supplements', { site_id: s.id, data: { a: 1 } }), 403, 'FORBIDDEN');
    });
  });
});
