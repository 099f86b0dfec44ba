import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { credentialCommand } from '@efs/cli';
import { COMMAND_KEYS, ISO, batteryWith, commandsOf, createEvent, discharge, enrolledSite, expectError, newProgram, uid, waitForCommands, type EnrolledSite } from './dispatchHelpers.ts';

const run = await tierAvailable('postgres');

/** The device cloud's side (client token) and the legacy dispatch paths (site token). */
describe.runIf(run)('commands: listing, acknowledgements, the legacy dispatch paths', () => {
  const t = useTestSystem();
  let other: ApiClient;
  let program: { id: string; zip: string };
  let site: EnrolledSite;
  let event: any;
  let commands: any[];

  beforeAll(async () => {
    const out: string[] = [];
    expect(await credentialCommand('client-token', 'create', ['--integrator', 'integrator-b'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    other = apiClient(t.urls.public, /token: (\S+)/.exec(out.join('\n'))![1]);
    await waitFor(async () => (await other.get('/v1/commands')).status === 200, { what: "integrator B's token" });
    program = await newProgram(t);
    site = await enrolledSite(t, program, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)]);
    event = (await createEvent(t, { program_id: program.id, target_type: 'SITE', target_ids: [site.siteId], actions: [discharge(6000, 3600, 600), discharge(2000, 7200, 600)] })).body;
    commands = await waitForCommands(t.api, event.id, 4);
  });

  it('lists the commands with every field, ordered by updated_at then id, and filters each way', async () => {
    for (const c of commands) {
      expect(Object.keys(c).sort()).toEqual(COMMAND_KEYS);
      for (const k of ['starts_at', 'ends_at', 'created_at', 'updated_at']) expect(c[k]).toMatch(ISO);
    }
    const all = (await t.api.get(`/v1/commands?site_id=${site.siteId}`)).body as any[];
    expect(all.map((c) => c.id)).toEqual([...all].sort((a, b) => a.updated_at.localeCompare(b.updated_at) || a.id.localeCompare(b.id)).map((c) => c.id));
    expect(all).toHaveLength(4);
    const [d1, d2] = site.devices;
    expect((await t.api.get(`/v1/commands?device_id=${d1}`)).body.map((c: any) => c.device_id)).toEqual([d1, d1]);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&device_id=${d2}&limit=1`)).body).toHaveLength(1);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&limit=2&skip=3`)).body).toHaveLength(1);

    const acked = await t.api.patch(`/v1/command/${all[0].id}`, { device_status: 'OK' });
    expect(acked.status, JSON.stringify(acked.body)).toBe(200);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&device_status=OK`)).body.map((c: any) => c.id)).toEqual([all[0].id]);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&device_status=PENDING&device_status=OK`)).body).toHaveLength(4);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&status=OK`)).body).toHaveLength(4);
    expect((await t.api.get(`/v1/commands?site_id=${site.siteId}&status=CANCELED&status=OPT_OUT`)).body).toEqual([]);
    // updated_since includes that instant: a poller that passes the last updated_at it saw misses nothing.
    const since = await t.api.get(`/v1/commands?site_id=${site.siteId}&updated_since=${encodeURIComponent(acked.body.updated_at)}`);
    expect(since.body.map((c: any) => c.id)).toEqual([acked.body.id]);
    expect(since.body.at(-1).id).toBe((await t.api.get(`/v1/commands?site_id=${site.siteId}`)).body.at(-1).id);
    for (const q of ['status=DONE', 'device_status=SENT', 'updated_since=yesterday', 'limit=0', 'limit=1001']) expectError(await t.api.get(`/v1/commands?${q}`), 400, 'VALIDATION_ERROR');
  });

  it('PATCH /v1/command/{id} and its alias /v1/commands/{id}: the device cloud acknowledges, answered with the command as it now is', async () => {
    const c = commands.find((x) => x.device_id === site.devices[1] && x.battery_commands.setpoint_w === 3000);
    const failed = await t.api.patch(`/v1/commands/${c.id}`, { device_status: 'FAILED_OFFLINE', device_status_reason: 'No heartbeat for 20 minutes' });
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({ ...c, device_status: 'FAILED_OFFLINE', device_status_reason: 'No heartbeat for 20 minutes', updated_at: failed.body.updated_at });
    expect(Date.parse(failed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    const ok = await t.api.patch(`/v1/command/${c.id}`, { device_status: 'OK' });
    expect(ok.body).toMatchObject({ device_status: 'OK', device_status_reason: null, status: 'OK' });
    // The same acknowledgement again changes nothing.
    expect((await t.api.patch(`/v1/command/${c.id}`, { device_status: 'OK' })).body).toEqual(ok.body);
    for (const body of [{ device_status: 'PENDING' }, { device_status: 'DONE' }, {}, { device_status: 'OK', extra: 1 }]) expectError(await t.api.patch(`/v1/command/${c.id}`, body), 400, 'VALIDATION_ERROR');
    expectError(await t.api.patch('/v1/command/00000000-0000-4000-8000-000000000000', { device_status: 'OK' }), 404, 'NOT_FOUND');
    expectError(await t.api.patch('/v1/command/not-a-uuid', { device_status: 'OK' }), 404, 'NOT_FOUND');
  });

  it("another integrator's client token sees none of these commands and cannot acknowledge them", async () => {
    expect(await commandsOf(other, event.id)).toEqual([]);
    expect((await other.get(`/v1/commands?site_id=${site.siteId}`)).body).toEqual([]);
    expectError(await other.patch(`/v1/command/${commands[0].id}`, { device_status: 'FAILED_FAULT' }), 404, 'NOT_FOUND');
    expect((await t.api.get(`/v1/commands?device_id=${commands[0].device_id}`)).body.every((c: any) => c.device_status !== 'FAILED_FAULT')).toBe(true);
  });

  it('legacy dispatch paths: a device’s dispatches, one dispatch, and opting out of that one command', async () => {
    const [d1] = site.devices;
    const list = await site.user.get(`/v1/site/${site.siteId}/device/${d1}/dispatches`);
    expect(list.status).toBe(200);
    expect(list.body.map((c: any) => c.device_id)).toEqual([d1, d1]);
    for (const c of list.body) expect(Object.keys(c).sort()).toEqual(COMMAND_KEYS);
    const one = list.body[0];
    expect((await site.user.get(`/v1/site/${site.siteId}/dispatch/${one.id}`)).body).toEqual(one);

    const out = await site.user.patch(`/v1/site/${site.siteId}/dispatch/${one.id}`, { is_participating: false });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ id: one.id, status: 'OPT_OUT' });
    expect((await t.api.get(`/v1/commands?device_id=${d1}&status=OPT_OUT`)).body.map((c: any) => c.id)).toEqual([one.id]);
    // The site still takes part in the event; only that command is out.
    expect((await site.user.get(`/v1/site/${site.siteId}/event/${event.id}`)).body.is_participating).toBe(true);
    const back = await site.user.patch(`/v1/site/${site.siteId}/dispatch/${one.id}`, { is_participating: true });
    expect(back.body).toMatchObject({ id: one.id, status: 'OK' });
    expectError(await site.user.patch(`/v1/site/${site.siteId}/dispatch/${one.id}`, { is_participating: 'no' }), 400, 'VALIDATION_ERROR');

    // Another site of the integrator: its token is refused here, and it finds no such dispatch at its own site.
    const neighbour = await enrolledSite(t, program);
    expectError(await neighbour.user.get(`/v1/site/${site.siteId}/dispatch/${one.id}`), 403, 'FORBIDDEN');
    expectError(await neighbour.user.get(`/v1/site/${neighbour.siteId}/dispatch/${one.id}`), 404, 'NOT_FOUND');
    expect((await neighbour.user.get(`/v1/site/${neighbour.siteId}/device/${d1}/dispatches`)).body).toEqual([]);
    expectError(await t.api.get(`/v1/site/${site.siteId}/dispatch/${one.id}`), 403, 'FORBIDDEN');
  });

  it('after the event is canceled its dispatches cannot be changed (409 EVENT_NOT_MODIFIABLE)', async () => {
    const s = await enrolledSite(t, program);
    const e = (await createEvent(t, { program_id: program.id, target_type: 'DEVICE', target_ids: s.devices, actions: [discharge(1000)] })).body;
    const [c] = await waitForCommands(t.api, e.id, 1);
    await t.utility.delete(`/v1/events/${e.id}`);
    expect((await s.user.get(`/v1/site/${s.siteId}/dispatch/${c.id}`)).body.status).toBe('CANCELED');
    expectError(await s.user.patch(`/v1/site/${s.siteId}/dispatch/${c.id}`, { is_participating: false }), 409, 'EVENT_NOT_MODIFIABLE');
    // The device cloud may still acknowledge it (it learned of it before the cancellation).
    expect((await t.api.patch(`/v1/command/${c.id}`, { device_status: 'OK' })).body).toMatchObject({ status: 'CANCELED', device_status: 'OK' });
  });
});
