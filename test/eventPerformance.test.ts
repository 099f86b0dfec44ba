import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tierAvailable, waitFor } from '@efs/testing';
import { startTestSystem, type TestSystem } from './harness/system.ts';
import { batteryWith, createEvent, enrolledSite, inSeconds, newProgram, uid, waitForCommands } from './dispatchHelpers.ts';
import { postAccepted } from './telemetryHelpers.ts';

const run = await tierAvailable('postgres');

/**
 * An event's performance per site over HTTP, as a utility reads it: expected from the commands,
 * actual from the telemetry device clouds post for the event's windows (discharged minus charged
 * in a DISCHARGE window, the reverse in a CHARGE one, pro rata at the edges), moving as late
 * telemetry arrives, and never beyond what a JSON reader holds exactly.
 */
describe.runIf(run)("an event's performance from telemetry", () => {
  let t: TestSystem;

  beforeAll(async () => {
    t = await startTestSystem();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const at = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();
  const reading = (deviceId: string, start: string, durationS: number, dischargeWh: number, chargeWh: number) => ({
    device_id: deviceId,
    start_time: start,
    duration_s: durationS,
    battery_total_energy_discharge_wh: dischargeWh,
    battery_total_energy_charge_wh: chargeWh,
  });
  const sitesOf = async (eventId: string) => {
    const r = await t.utility.get(`/v1/events/${eventId}/sites`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { site_id: string; performance_actual_energy_wh: number | null; performance_actual_power_w: number | null; [k: string]: unknown }[];
  };

  it('fills the actual figures from the telemetry of the participating devices inside each action window, updated by late and resent readings', async () => {
    const p = await newProgram(t);
    const a = await enrolledSite(t, p, [batteryWith(uid('a1'), 5000), batteryWith(uid('a2'), 5000)]);
    const b = await enrolledSite(t, p, [batteryWith(uid('b1'), 5000)]);
    // A DISCHARGE hour, an hour's gap, then a CHARGE quarter of an hour: the event spans 2.25 h.
    const discharge = { starts_at: inSeconds(7200), duration_s: 3600, mode: 'DISCHARGE', setpoint_w: 6000 };
    const charge = { starts_at: at(discharge.starts_at, 7200), duration_s: 900, mode: 'CHARGE', setpoint_w: 3000 };
    const created = await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [a.siteId, b.siteId], actions: [discharge, charge] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const e = created.body;
    expect(e.duration_s).toBe(8100);
    await waitForCommands(t.api, e.id, 6);
    // Site b opts out: its telemetry is not what the event asked of it.
    expect((await b.user.patch(`/v1/site/${b.siteId}/event/${e.id}`, { is_participating: false })).status).toBe(200);

    // Before any telemetry: expected from the commands (2000 W a device for an hour, 1000 W for a quarter), actual null.
    const before = await sitesOf(e.id);
    const expectedA = 2 * 2000 + 2 * 250;
    expect(before.find((s) => s.site_id === a.siteId)).toEqual({
      site_id: a.siteId, is_participating: true,
      performance_expected_energy_wh: expectedA, performance_expected_power_w: Math.round((expectedA * 3600) / 8100),
      performance_actual_energy_wh: null, performance_actual_power_w: null,
    });
    expect(before.find((s) => s.site_id === b.siteId)).toMatchObject({ is_participating: false, performance_expected_energy_wh: 0, performance_actual_energy_wh: null });

    const [a1, a2] = a.devices as [string, string];
    const d0 = discharge.starts_at;
    await postAccepted(t.api, '/v1/telemetry/BATTERY', [
      // a1: six 10-minute intervals of the DISCHARGE hour, 300 Wh out and 20 Wh in each.
      ...Array.from({ length: 6 }, (_, i) => reading(a1, at(d0, i * 600), 600, 300, 20)),
      // a2: an interval straddling the window's start counts half; one in the gap between the actions not at all.
      reading(a2, at(d0, -300), 600, 400, 0),
      reading(a2, at(d0, 3600 + 600), 600, 999, 0),
      // a1 charging inside the CHARGE window: charged minus discharged.
      reading(a1, charge.starts_at, 900, 10, 510),
    ]);
    await postAccepted(t.api, '/v1/telemetry', [reading(b.devices[0]!, at(d0, 0), 3600, 4000, 0)]);
    const actualA = 6 * 280 + 200 + 500;
    const siteA = () => sitesOf(e.id).then((list) => list.find((s) => s.site_id === a.siteId)!);
    await waitFor(async () => (await siteA()).performance_actual_energy_wh === actualA, { what: `site a delivering ${actualA} Wh` });
    expect(await siteA()).toMatchObject({ performance_actual_energy_wh: actualA, performance_actual_power_w: Math.round((actualA * 3600) / 8100), performance_expected_energy_wh: expectedA });
    // b opted out: its device's telemetry counts for nothing.
    expect((await sitesOf(e.id)).find((s) => s.site_id === b.siteId)).toMatchObject({ performance_actual_energy_wh: null, performance_actual_power_w: null });

    // Late telemetry (a2 inside the window) adds; a resend of a1's first interval replaces it, never adds.
    await postAccepted(t.api, '/v1/telemetry/BATTERY', [reading(a2, at(d0, 1200), 600, 350, 50), reading(a1, at(d0, 0), 600, 500, 20)]);
    const later = actualA + 300 + 200;
    await waitFor(async () => (await siteA()).performance_actual_energy_wh === later, { what: `site a delivering ${later} Wh after the late readings` });
    expect((await siteA()).performance_actual_power_w).toBe(Math.round((later * 3600) / 8100));
  });

  it('answers whole figures a JSON reader holds exactly, whatever a device reports', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p, [batteryWith(uid('big'), 5000)]);
    const action = { starts_at: inSeconds(7200), duration_s: 3600, mode: 'DISCHARGE', setpoint_w: 5000 };
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [action] })).body;
    await waitForCommands(t.api, e.id, 1);
    // Readings are numbers 0 or more with no upper bound: 1e308 twice would be Infinity if added as sent.
    await postAccepted(t.api, '/v1/telemetry/BATTERY', Array.from({ length: 12 }, (_, i) => ({
      device_id: s.devices[0], start_time: at(action.starts_at, i * 300), duration_s: 300, battery_total_energy_discharge_wh: 1e308, battery_last_power_discharge_w: 1e308,
    })));
    const site = await waitFor(async () => {
      const [one] = await sitesOf(e.id);
      return one!.performance_actual_energy_wh !== null ? one : undefined;
    }, { what: 'actual figures' });
    for (const k of ['performance_actual_energy_wh', 'performance_actual_power_w', 'performance_expected_energy_wh', 'performance_expected_power_w']) {
      expect(Number.isSafeInteger(site![k]), `${k}: ${site![k]}`).toBe(true);
    }
    expect(site!.performance_actual_energy_wh).toBeGreaterThan(0);
  });
});
