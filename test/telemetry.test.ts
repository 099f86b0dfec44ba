import { beforeAll, describe, expect, it } from 'vitest';
import type { InProcessTransport } from '@efs/messaging';
import { apiClient, SANDBOX_UTILITY_API_KEY, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { credentialCommand } from '@efs/cli';
import { useTestSystem } from './harness/system.ts';
import { expectError } from './commissioningHelpers.ts';
import { Sandbox } from './enrollmentHelpers.ts';
import { at, enroll, item, postAccepted, siteWithBatteries, TELEMETRY_ROW_FIELDS } from './telemetryHelpers.ts';

const run = await tierAvailable('postgres');

/**
 * Telemetry over HTTP, as device clouds report it and utilities read it: per-item results,
 * tenancy, replacement on resend, counters turned into intervals, paginated reads.
 */
describe.runIf(run)('telemetry over HTTP', () => {
  // Readings are kept 3 days before today: the helpers' readings are two days old.
  const t = useTestSystem({ SANDBOX_AUTO_APPROVE_DELAY_MS: '3600000', TELEMETRY_RETENTION_DAYS: '3' });
  let b: ApiClient;
  let utilityB: ApiClient;

  const created = async (kind: 'client-token' | 'utility-key', args: string[]) => {
    const out: string[] = [];
    expect(await credentialCommand(kind, 'create', args, { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    return /token: (efs_\S+)/.exec(out.join('\n'))![1]!;
  };

  beforeAll(async () => {
    b = apiClient(t.urls.public, await created('client-token', ['--integrator', 'integrator-b']));
    utilityB = apiClient(t.urls.utility, await created('utility-key', ['--utility', 'utility-b']));
    await waitFor(async () => (await b.get('/v1/sites')).status === 200 && (await utilityB.get('/v1/programs')).status === 200, { what: 'the new credentials' });
  });

  const historical = (program_id: string, body: Record<string, unknown> = {}, client: ApiClient = t.utility) =>
    client.post('/v1/telemetry/historical', { program_id, start_time: at(-60), end_time: at(24 * 60), ...body });

  describe('ingest', () => {
    it('answers every item in request order: good ones OK, a bad one FAILED with what is wrong, the batch never rejected', async () => {
      const { devices } = await siteWithBatteries(t, 2);
      const { devices: foreign } = await siteWithBatteries(t, 1, b);
      await postAccepted(t.api, '/v1/telemetry/BATTERY', [item(devices[0]!, 0)]);
      const r = await t.api.post('/v1/telemetry/BATTERY', {
        telemetry: [
          item(devices[0]!, 5),
          { ...item(devices[1]!, 5), battery_last_power_charge_w: -1 },
          item('never-commissioned', 5),
          item(foreign[0]!, 5),
          { ...item(devices[1]!, 10), duration_s: undefined },
          42,
          item(devices[1]!, 15),
        ],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.results.map((x: any) => [x.index, x.status])).toEqual([
        [0, 'OK'],
        [1, 'FAILED'],
        [2, 'FAILED'],
        [3, 'FAILED'],
        [4, 'FAILED'],
        [5, 'FAILED'],
        [6, 'OK'],
      ]);
      expect(r.body.results[0].errors).toBeUndefined();
      expect(r.body.results[1].errors).toEqual([expect.objectContaining({ path: 'telemetry/1/battery_last_power_charge_w', message: expect.any(String) })]);
      expect(r.body.results[2].errors[0]).toMatchObject({ path: 'telemetry/2/device_id', message: expect.stringContaining('never-commissioned') });
      expect(r.body.results[3].errors[0]).toMatchObject({ path: 'telemetry/3/device_id' });
      expect(r.body.results[4].errors[0]).toMatchObject({ path: 'telemetry/4/duration_s' });
      // The other integrator's own report of its device is accepted.
      await postAccepted(b, '/v1/telemetry/BATTERY', [item(foreign[0]!, 5)]);
    });

    it('refuses, item by item, a reading older than TELEMETRY_RETENTION_DAYS keeps, and takes one on its first kept day', async () => {
      const { devices } = await siteWithBatteries(t, 1);
      const firstKept = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 3 * 86_400_000;
      const old = { ...item(devices[0]!, 0), start_time: new Date(firstKept - 300_000).toISOString() };
      const kept = { ...item(devices[0]!, 0), start_time: new Date(firstKept).toISOString() };
      const r = await postAccepted(t.api, '/v1/telemetry/BATTERY', [kept]).then(() => t.api.post('/v1/telemetry/BATTERY', { telemetry: [old, kept] }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.results.map((x: any) => x.status)).toEqual(['FAILED', 'OK']);
      expect(r.body.results[0].errors[0]).toMatchObject({ path: 'telemetry/0/start_time', message: expect.stringContaining('TELEMETRY_RETENTION_DAYS') });
      const counter = await t.api.post('/v1/telemetry/BATTERY_COUNTER', { telemetry: [{ device_id: devices[0]!, timestamp: old.start_time, battery_lifetime_energy_charge_wh: 1, battery_lifetime_energy_discharge_wh: 1 }] });
      expect(counter.body.results[0]).toMatchObject({ status: 'FAILED', errors: [expect.objectContaining({ path: 'telemetry/0/timestamp' })] });
    });

    it('takes at most 1,000 items: 1,001 answers 400 with the error body, 1,000 answers 1,000 results', async () => {
      const { devices } = await siteWithBatteries(t, 1);
      const many = (n: number) => Array.from({ length: n }, (_, i) => item(devices[0]!, i * 5));
      expectError(await t.api.post('/v1/telemetry/BATTERY', { telemetry: many(1001) }), 400, 'VALIDATION_ERROR');
      expectError(await t.api.post('/v1/telemetry/BATTERY_COUNTER', { telemetry: many(1001) }), 400, 'VALIDATION_ERROR');
      const ok = await postAccepted(t.api, '/v1/telemetry/BATTERY', many(1000));
      expect(ok.results).toHaveLength(1000);
      expect(ok.results.map((x: any) => x.index)).toEqual([...Array(1000).keys()]);
    });

    it('answers 400 for a body that is not a batch, and an empty batch with no results', async () => {
      expectError(await t.api.post('/v1/telemetry/BATTERY', { items: [] }), 400, 'VALIDATION_ERROR');
      expectError(await t.api.post('/v1/telemetry/BATTERY', { telemetry: 'no' }), 400, 'VALIDATION_ERROR');
      expect((await t.api.post('/v1/telemetry/BATTERY', { telemetry: [] })).body).toEqual({ results: [] });
    });

    it('takes a client token only: 401 without one, 403 for a site token or a utility key', async () => {
      const { siteId, s } = await siteWithBatteries(t, 1);
      for (const path of ['/v1/telemetry/BATTERY', '/v1/telemetry', '/v1/telemetry/BATTERY_COUNTER']) {
        expectError(await t.api.withToken(undefined).post(path, { telemetry: [] }), 401, 'UNAUTHORIZED');
        expectError(await s.post(path, { telemetry: [] }), 403, 'FORBIDDEN');
        expectError(await apiClient(t.urls.public, SANDBOX_UTILITY_API_KEY).post(path, { telemetry: [] }), 403, 'FORBIDDEN');
      }
      expect(siteId).toBeTruthy();
      for (const path of ['/v1/telemetry/latest', '/v1/telemetry/historical']) {
        expectError(await apiClient(t.urls.utility).post(path, { program_id: Sandbox.batteryCapacity }), 401, 'UNAUTHORIZED');
        expectError(await s.withToken(undefined).post(path, {}), 404, 'NOT_FOUND');
      }
    });
  });

  describe('utility reads', () => {
    it('serves an enrolled device’s readings (legacy path too), replaced on resend, and keeps unenrolled devices out until they enroll', async () => {
      const { siteId, devices, s } = await siteWithBatteries(t, 2);
      const [enrolled, later] = devices as [string, string];
      await enroll(s, siteId, [enrolled]);
      // Telemetry is taken for devices whether enrolled or not.
      await postAccepted(t.api, '/v1/telemetry/BATTERY', [item(enrolled, 0, { battery_last_power_discharge_w: 1000 }), item(later, 0)]);
      await postAccepted(t.api, '/v1/telemetry', [item(enrolled, 5, { battery_last_power_discharge_w: 2000 })]);
      // A resend of the same device and start replaces the first.
      await postAccepted(t.api, '/v1/telemetry/BATTERY', [item(enrolled, 0, { battery_last_power_discharge_w: 1500, home_last_power_w: 3000, solar_last_power_w: 500, battery_last_power_charge_w: 0 })]);

      const rows = await waitFor(async () => {
        const r = await historical(Sandbox.batteryCapacity, { device_ids: [enrolled, later] });
        return r.status === 200 && r.body.length === 2 && r.body[0].battery_power_discharge_w === 1500 ? r.body : undefined;
      }, { what: 'the enrolled device’s two readings, the first replaced' });
      expect(rows.map((x: any) => [x.device_id, x.start_time, x.battery_power_discharge_w])).toEqual([
        [enrolled, at(0), 1500],
        [enrolled, at(5), 2000],
      ]);
      expect(Object.keys(rows[0]).sort()).toEqual(TELEMETRY_ROW_FIELDS);
      // The grid is the balance of home, solar and battery (import positive); null when one is missing.
      expect(rows[0]).toMatchObject({ home_power_w: 3000, solar_power_w: 500, grid_power_w: 3000 + 0 - 500 - 1500, last_is_online: true, duration_s: 300 });
      expect(rows[1]).toMatchObject({ grid_power_w: null, home_power_w: null });

      const latest = await t.utility.post('/v1/telemetry/latest', { program_id: Sandbox.batteryCapacity, device_ids: [enrolled, later] });
      expect(latest.status).toBe(200);
      expect(latest.body.map((x: any) => [x.device_id, x.start_time])).toEqual([[enrolled, at(5)]]);

      // Once the second device enrolls (PENDING counts), its earlier telemetry is there.
      await enroll(s, siteId, [later]);
      await waitFor(async () => (await historical(Sandbox.batteryCapacity, { device_ids: [later] })).body.length === 1, { what: 'the newly enrolled device’s reading' });
    });

    it('answers only the utility’s own programs (404 for another’s or an unknown one) and never another program’s devices', async () => {
      const { siteId, devices, s } = await siteWithBatteries(t, 1);
      await enroll(s, siteId, devices);
      await postAccepted(t.api, '/v1/telemetry/BATTERY', [item(devices[0]!, 30)]);
      await waitFor(async () => (await historical(Sandbox.batteryCapacity, { device_ids: devices })).body.length === 1, { what: 'the reading' });
      expectError(await historical(Sandbox.batteryCapacity, {}, utilityB), 404, 'NOT_FOUND');
      expectError(await utilityB.post('/v1/telemetry/latest', { program_id: Sandbox.batteryCapacity }), 404, 'NOT_FOUND');
      expectError(await historical('00000000-0000-4000-8000-00000000dead'), 404, 'NOT_FOUND');
      const own = await utilityB.post('/v1/programs', { name: 'B battery', description: 'b', eligible_device_types: ['BATTERY'], zip_codes: ['88801'] });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      await waitFor(async () => (await historical(own.body.id, {}, utilityB)).status === 200, { what: 'utility B’s program known to telemetry' });
      expect((await historical(own.body.id, { device_ids: devices }, utilityB)).body).toEqual([]);
      // The auto-enroll program has no enrollment of this device either.
      expect((await historical(Sandbox.batteryAutoEnroll, { device_ids: devices })).body).toEqual([]);
    });

    it('answers 400 for a window that ends before it starts or a cursor it never gave', async () => {
      expectError(await historical(Sandbox.batteryCapacity, { start_time: at(10), end_time: at(0) }), 400, 'VALIDATION_ERROR');
      expectError(await historical(Sandbox.batteryCapacity, { cursor: 'bm90IGEgY3Vyc29y' }), 400, 'VALIDATION_ERROR');
      expectError(await historical(Sandbox.batteryCapacity, { limit: 1001 }), 400, 'VALIDATION_ERROR');
    });

    it('pages a long window in time order: limit rows a page, the Next-Cursor header leading to the next, none after the last', async () => {
      const { siteId, devices, s } = await siteWithBatteries(t, 3);
      await enroll(s, siteId, devices);
      const items = devices.flatMap((d) => Array.from({ length: 10 }, (_, i) => item(d, 600 + i * 5)));
      await postAccepted(t.api, '/v1/telemetry/BATTERY', items);
      const window = { device_ids: devices, start_time: at(600), end_time: at(650), limit: 7 };
      await waitFor(async () => (await historical(Sandbox.batteryCapacity, { ...window, limit: 1000 })).body.length === 30, { what: 'all 30 readings' });
      const seen: any[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await historical(Sandbox.batteryCapacity, { ...window, ...(cursor ? { cursor } : {}) });
        expect(r.status).toBe(200);
        expect(r.body.length).toBeLessThanOrEqual(7);
        seen.push(...r.body);
        cursor = r.headers.get('next-cursor') ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(5);
      expect(seen).toHaveLength(30);
      const times = seen.map((x) => Date.parse(x.start_time));
      expect(times).toEqual([...times].sort((x, y) => x - y));
      expect(new Set(seen.map((x) => `${x.device_id} ${x.start_time}`)).size).toBe(30);
      const first = await t.utility.post('/v1/telemetry/latest', { program_id: Sandbox.batteryCapacity, device_ids: devices, limit: 2 });
      expect(first.body.map((x: any) => x.start_time)).toEqual([at(645), at(645)]);
      const rest = await t.utility.post('/v1/telemetry/latest', { program_id: Sandbox.batteryCapacity, device_ids: devices, limit: 2, cursor: first.headers.get('next-cursor') });
      expect(rest.body).toHaveLength(1);
      expect(rest.headers.get('next-cursor')).toBeNull();
    });
  });

  describe('counters', () => {
    it('turns lifetime counters into intervals, a reset starting a new series, a late reading splitting the interval it falls in', async () => {
      const { siteId, devices, s } = await siteWithBatteries(t, 1);
      const d = devices[0]!;
      await enroll(s, siteId, devices);
      const counter = (minutes: number, charge: number, discharge: number, soc?: number) => ({
        device_id: d,
        timestamp: at(minutes),
        battery_lifetime_energy_charge_wh: charge,
        battery_lifetime_energy_discharge_wh: discharge,
        ...(soc === undefined ? {} : { battery_state_of_charge_percentage: soc }),
      });
      await postAccepted(t.api, '/v1/telemetry/BATTERY_COUNTER', [counter(0, 1000, 500, 50), counter(10, 1100, 700, 40), counter(20, 40, 10, 45), counter(30, 90, 30)]);
      const intervals = async () => (await historical(Sandbox.batteryCapacity, { device_ids: [d] })).body.map((x: any) => [x.start_time, x.duration_s, x.battery_total_energy_charge_wh, x.battery_total_energy_discharge_wh, x.battery_state_of_charge_percentage]);
      // 0→10: +100 charged, +200 discharged; 10→20 went down: a reset, no interval; 20→30: a new series.
      await waitFor(async () => (await intervals()).length === 2, { what: 'two intervals' });
      expect(await intervals()).toEqual([
        [at(0), 600, 100, 200, 40],
        [at(20), 600, 50, 20, null],
      ]);
      // A late reading at 5 splits 0→10; a resend of 30 with other values replaces it.
      await postAccepted(t.api, '/v1/telemetry/BATTERY_COUNTER', [counter(5, 1030, 650, 48), counter(30, 100, 30)]);
      await waitFor(async () => (await intervals()).length === 3, { what: 'the split interval' });
      expect(await intervals()).toEqual([
        [at(0), 300, 30, 150, 48],
        [at(5), 300, 70, 50, 40],
        [at(20), 600, 60, 20, null],
      ]);
      // The same readings sent again change nothing.
      await postAccepted(t.api, '/v1/telemetry/BATTERY_COUNTER', [counter(0, 1000, 500, 50), counter(5, 1030, 650, 48), counter(10, 1100, 700, 40)]);
      await (t.system.transport as InProcessTransport).idle();
      expect(await intervals()).toEqual([
        [at(0), 300, 30, 150, 48],
        [at(5), 300, 70, 50, 40],
        [at(20), 600, 60, 20, null],
      ]);
    });

    it('rejects a counter item without both lifetime counters, and never makes a negative interval', async () => {
      const { devices } = await siteWithBatteries(t, 1);
      const r = await t.api.post('/v1/telemetry/BATTERY_COUNTER', { telemetry: [{ device_id: devices[0], timestamp: at(0), battery_lifetime_energy_charge_wh: 5 }] });
      expect(r.body.results[0]).toMatchObject({ status: 'FAILED', errors: [expect.objectContaining({ path: 'telemetry/0/battery_lifetime_energy_discharge_wh' })] });
      expect((await t.api.post('/v1/telemetry/BATTERY_COUNTER', { telemetry: [{ device_id: devices[0], timestamp: at(0), battery_lifetime_energy_charge_wh: -5, battery_lifetime_energy_discharge_wh: 1 }] })).body.results[0].status).toBe('FAILED');
    });
  });
});
