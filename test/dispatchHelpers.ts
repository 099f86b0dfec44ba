import { expect } from 'vitest';
import { apiClient, waitFor, type ApiClient, type ApiResponse } from '@efs/testing';
import type { TestSystem } from './harness/system.ts';
import { asSite, battery, uid } from './commissioningHelpers.ts';
import { completeSite } from './enrollmentHelpers.ts';

export { asSite, battery, evCharger, expectError, uid, ISO } from './commissioningHelpers.ts';

/** A fresh zip code per program, so the programs of different tests never meet. */
let zipSeq = 60000 + Math.floor(Math.random() * 9000);
export const newZip = () => String(zipSeq++);

export const EVENT_KEYS = ['actions', 'created_at', 'duration_s', 'ends_at', 'id', 'program_id', 'starts_at', 'status', 'target_ids', 'target_type', 'updated_at'];
export const ACTION_KEYS = ['backup_reserve_percentage', 'duration_s', 'enable_grid_import', 'mode', 'power_mode', 'setpoint_mode', 'setpoint_w', 'starts_at'];
export const COMMAND_KEYS = ['battery_commands', 'created_at', 'device_id', 'device_status', 'device_status_reason', 'duration_s', 'ends_at', 'event_id', 'id', 'site_id', 'starts_at', 'status', 'updated_at'];
export const SITE_EVENT_KEYS = ['created_at', 'device_settings', 'duration_s', 'ends_at', 'id', 'is_participating', 'program_id', 'schedule', 'site_id', 'starts_at', 'status', 'updated_at'];

/** An ISO time `seconds` from now. */
/** An instant `seconds` after `from` (now by default); pass one `from` to times that are compared with each other. */
export const inSeconds = (seconds: number, from = Date.now()) => new Date(from + seconds * 1000).toISOString();

/** A program of the sandbox utility of its own, on a fresh zip code. */
export async function newProgram(t: TestSystem, over: Record<string, unknown> = {}): Promise<{ id: string; zip: string }> {
  const zip = newZip();
  const r = await t.utility.post('/v1/programs', { name: uid('Peak'), eligible_device_types: ['BATTERY', 'EV_CHARGER'], zip_codes: [zip], minimum_reserve_percentage: 20, ...over });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  // Enrollment follows the catalog's topic: its groups answer once it knows the program.
  await waitFor(async () => (await t.utility.get(`/v1/programs/${r.body.id}/groups`)).status === 200, { what: 'enrollment knows the program' });
  return { id: r.body.id, zip };
}

export interface EnrolledSite {
  siteId: string;
  devices: string[];
  enrollmentId: string;
  /** The site's end user (site token). */
  user: ApiClient;
}

/**
 * A commissioned site whose devices are enrolled in the program and approved by the utility
 * (ACTIVE). `devices` are device bodies without `site_id` (filled in); batteries by default.
 */
export async function enrolledSite(
  t: TestSystem,
  program: { id: string; zip: string },
  devices: ((siteId: string) => Record<string, unknown>)[] = [(s) => battery(s, uid('b'))],
  opts: { client?: ApiClient; siteId?: string; groupIds?: string[] } = {},
): Promise<EnrolledSite> {
  const client = opts.client ?? t.api;
  const siteId = opts.siteId ?? uid('site');
  const bodies = devices.map((d) => d(siteId));
  const c = await client.post('/v1/commission', { site: { id: siteId, ...completeSite, zip_code: program.zip }, devices: bodies, can_auto_enroll: false });
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  const user = await asSite(t, siteId, client);
  const ids = bodies.map((b) => b.id as string);
  const e = await waitFor(async () => {
    const r = await user.post(`/v1/site/${siteId}/enrollments`, { program_id: program.id, device_ids: ids });
    return r.status === 200 ? r.body : undefined;
  }, { what: 'enrollment accepted' });
  const approved = await t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'ACTIVE', ...(opts.groupIds ? { group_ids: opts.groupIds } : {}) });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return { siteId, devices: ids, enrollmentId: e.id, user };
}

/** A battery with the given rated powers. */
export const batteryWith = (id: string, outputW: number, inputW = outputW, capacityWh = 13500) => (siteId: string) =>
  battery(siteId, id, { attributes: { battery_capacity_wh: capacityWh, battery_power_input_w: inputW, battery_power_output_w: outputW } });

/** One DISCHARGE action with a setpoint, starting `startIn` seconds from now. */
export const discharge = (setpointW: number, startIn = 3600, durationS = 3600, over: Record<string, unknown> = {}) => ({
  starts_at: inSeconds(startIn),
  duration_s: durationS,
  mode: 'DISCHARGE',
  setpoint_w: setpointW,
  ...over,
});

/**
 * Creates an event once dispatch's read models have the program and the enrollments it targets
 * (they follow the catalog and enrollment topics a moment behind): a 404 for the program or a
 * target, or a 409 for "no ACTIVE enrollment", is retried; anything else is answered as it is.
 */
export async function createEvent(t: TestSystem, body: Record<string, unknown>): Promise<ApiResponse> {
  let last: ApiResponse | undefined;
  await waitFor(async () => {
    const r = await t.utility.post('/v1/events', body);
    last = r;
    return !((r.status === 409 || r.status === 404) && /no device with an ACTIVE enrollment|not known in this program|^Program \S+ not found/.test(r.body?.message ?? ''));
  }, { what: 'dispatch to know the targets' }).catch(() => undefined);
  return last!;
}

/** The integrator's commands of one event (client token), all pages. */
export async function commandsOf(client: ApiClient, eventId: string, query = ''): Promise<any[]> {
  const out: any[] = [];
  for (let skip = 0; ; skip += 1000) {
    const r = await client.get(`/v1/commands?limit=1000&skip=${skip}${query ? `&${query}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.filter((c: { event_id: string }) => c.event_id === eventId));
    if (r.body.length < 1000) return out;
  }
}

/** Waits until the event's commands exist for the integrator, and answers them. */
export async function waitForCommands(client: ApiClient, eventId: string, count: number): Promise<any[]> {
  return waitFor(async () => {
    const list = await commandsOf(client, eventId);
    return list.length >= count ? list : undefined;
  }, { what: `${count} commands of event ${eventId}` });
}

export { apiClient };
