import { expect } from 'vitest';
import { waitFor, type ApiClient } from '@efs/testing';
import type { TestSystem } from './harness/system.ts';
import { asSite, battery, uid } from './commissioningHelpers.ts';
import { capacityEnrollment, completeSite } from './enrollmentHelpers.ts';

export { uid };

/** The row fields of decisions.md's utility reads: every one in every row, nothing else. */
export const TELEMETRY_ROW_FIELDS = [
  'device_id', 'start_time', 'duration_s', 'last_is_online', 'last_mode', 'battery_power_charge_w', 'battery_power_discharge_w',
  'battery_state_of_charge_percentage', 'battery_last_backup_reserve_percentage', 'battery_total_energy_charge_wh',
  'battery_total_energy_discharge_wh', 'grid_power_w', 'grid_total_energy_wh', 'home_power_w', 'home_total_energy_wh', 'solar_power_w',
  'solar_total_energy_wh',
].sort();

/** A UTC time `minutes` after a fixed day two days ago (its partition is made on demand). */
const base = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 2 * 86_400_000;
export const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();

/** A BATTERY item of five minutes from `at(minutes)`. */
export const item = (deviceId: string, minutes: number, readings: Record<string, unknown> = {}) => ({
  device_id: deviceId,
  start_time: at(minutes),
  duration_s: 300,
  last_is_online: true,
  battery_total_energy_discharge_wh: 100,
  battery_total_energy_charge_wh: 0,
  ...readings,
});

/** Commissions a complete site with `n` batteries; answers the site, its device ids and a site-token client. */
export async function siteWithBatteries(t: TestSystem, n: number, client: ApiClient = t.api): Promise<{ siteId: string; devices: string[]; s: ApiClient }> {
  const siteId = uid('site');
  const devices = Array.from({ length: n }, () => uid('bat'));
  const r = await client.post('/v1/commission', { site: { id: siteId, ...completeSite }, devices: devices.map((d) => battery(siteId, d)), can_auto_enroll: false });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { siteId, devices, s: await asSite(t, siteId, client) };
}

/** Enrolls devices of a site in the sandbox capacity program (PENDING). */
export async function enroll(s: ApiClient, siteId: string, devices: string[]): Promise<string> {
  const r = await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(devices));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

/** Posts a batch until every item is OK (a device commissioned a moment ago may not be known to the gateway yet). */
export async function postAccepted(client: ApiClient, path: string, items: unknown[]): Promise<any> {
  return waitFor(
    async () => {
      const r = await client.post(path, { telemetry: items });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.results.every((x: { status: string }) => x.status === 'OK') ? r.body : undefined;
    },
    { what: `every item of ${path} accepted` },
  );
}
