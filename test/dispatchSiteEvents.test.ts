import { describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { redeemPortalSession, tokenOfPortalUrl } from '../services/gateway/test/harness.ts';
import { ISO, SITE_EVENT_KEYS, batteryWith, createEvent, discharge, enrolledSite, expectError, inSeconds, newProgram, uid, waitForCommands } from './dispatchHelpers.ts';

const run = await tierAvailable('postgres');

/** The end user's events (site token, portal session): reading them, opting out, the reserve for one event. */
describe.runIf(run)("the end user's events and participation", () => {
  const t = useTestSystem();

  const siteCommands = async (siteId: string, eventId: string) =>
    ((await t.api.get(`/v1/commands?site_id=${siteId}&limit=1000`)).body as any[]).filter((c) => c.event_id === eventId).sort((a, b) => a.id.localeCompare(b.id));

  it('lists the events reaching the site, newest start first, by repeatable status; reads one with every field', async () => {
    const p = await newProgram(t, { minimum_reserve_percentage: 20 });
    const s = await enrolledSite(t, p, [batteryWith('bat-1', 5000), batteryWith('bat-2', 5000)]);
    const elsewhere = await enrolledSite(t, p);
    const soon = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000, 3600), { starts_at: inSeconds(7200), duration_s: 900, mode: 'CHARGE' }] })).body;
    const later = (await createEvent(t, { program_id: p.id, target_type: 'DEVICE', target_ids: ['bat-2'], actions: [discharge(1000, 86_400)] })).body;
    const canceled = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000, 40_000)] })).body;
    const notHere = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [elsewhere.siteId], actions: [discharge(1000, 50_000)] })).body;
    await t.utility.delete(`/v1/events/${canceled.id}`);

    const list = await s.user.get(`/v1/site/${s.siteId}/events`);
    expect(list.status).toBe(200);
    expect(list.body.map((e: { id: string }) => e.id)).toEqual([later.id, canceled.id, soon.id]);
    const ids = async (q: string) => (await s.user.get(`/v1/site/${s.siteId}/events?${q}`)).body.map((e: { id: string }) => e.id);
    expect(await ids('status=UPCOMING')).toEqual([later.id, soon.id]);
    expect(await ids('status=UPCOMING&status=CANCELED')).toEqual([later.id, canceled.id, soon.id]);
    expect(await ids('status=IN_PROGRESS&status=COMPLETED')).toEqual([]);
    expect(await ids('limit=1&skip=1')).toEqual([canceled.id]);
    expectError(await s.user.get(`/v1/site/${s.siteId}/events?status=LATER`), 400, 'VALIDATION_ERROR');

    const one = await s.user.get(`/v1/site/${s.siteId}/event/${soon.id}`);
    expect(Object.keys(one.body).sort()).toEqual(SITE_EVENT_KEYS);
    expect(one.body).toEqual({
      id: soon.id,
      program_id: p.id,
      site_id: s.siteId,
      status: 'UPCOMING',
      starts_at: soon.starts_at,
      ends_at: soon.ends_at,
      duration_s: soon.duration_s,
      is_participating: true,
      device_settings: [
        { device_id: 'bat-1', backup_reserve_percentage: null, effective_backup_reserve_percentage: 20 },
        { device_id: 'bat-2', backup_reserve_percentage: null, effective_backup_reserve_percentage: 20 },
      ],
      schedule: [
        { device_ids: ['bat-1', 'bat-2'], starts_at: soon.actions[0].starts_at, ends_at: new Date(Date.parse(soon.actions[0].starts_at) + 3600_000).toISOString(), duration_s: 3600, mode: 'DISCHARGE' },
        { device_ids: ['bat-1', 'bat-2'], starts_at: soon.actions[1].starts_at, ends_at: soon.ends_at, duration_s: 900, mode: 'CHARGE' },
      ],
      created_at: soon.created_at,
      updated_at: expect.stringMatching(ISO),
    });
    expect((await s.user.get(`/v1/site/${s.siteId}/event/${later.id}`)).body.schedule).toEqual([expect.objectContaining({ device_ids: ['bat-2'] })]);
    expectError(await s.user.get(`/v1/site/${s.siteId}/event/${notHere.id}`), 404, 'NOT_FOUND');
    expectError(await s.user.get(`/v1/site/${s.siteId}/event/not-an-id`), 404, 'NOT_FOUND');
    expectError(await elsewhere.user.get(`/v1/site/${s.siteId}/events`), 403, 'FORBIDDEN');
    expectError(await t.api.get(`/v1/site/${s.siteId}/events`), 403, 'FORBIDDEN');
  });

  it('opting out turns the site’s commands to OPT_OUT (the same commands, updated); opting back in restores them', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)]);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000)] })).body;
    const before = await waitForCommands(t.api, e.id, 2);
    const out = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { is_participating: false });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toMatchObject({ id: e.id, is_participating: false, status: 'UPCOMING' });
    const after = await siteCommands(s.siteId, e.id);
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id).sort());
    for (const c of after) expect(c).toMatchObject({ status: 'OPT_OUT', battery_commands: { setpoint_w: 2000 } });
    expect((await t.utility.get(`/v1/events/${e.id}/sites`)).body).toEqual([expect.objectContaining({ site_id: s.siteId, is_participating: false, performance_expected_energy_wh: 0 })]);
    const back = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { is_participating: true });
    expect(back.body.is_participating).toBe(true);
    for (const c of await siteCommands(s.siteId, e.id)) expect(c.status).toBe('OK');
  });

  it("the event-specific reserve: top-level for every device, per device after it, null clears; below the program's minimum is 400", async () => {
    const p = await newProgram(t, { minimum_reserve_percentage: 20 });
    const s = await enrolledSite(t, p, [batteryWith('r-1', 5000), batteryWith('r-2', 5000)]);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000), discharge(2000, 7200, 600, { backup_reserve_percentage: 35 })] })).body;
    const before = await waitForCommands(t.api, e.id, 4);
    const reserveOf = async () => (await siteCommands(s.siteId, e.id)).map((c) => [c.device_id, c.starts_at === e.starts_at ? 'first' : 'second', c.battery_commands.backup_reserve_percentage]).sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
    // The utility's level for its second action is the program's level there.
    expect(await reserveOf()).toEqual([
      ['r-1', 'first', 20],
      ['r-1', 'second', 35],
      ['r-2', 'first', 20],
      ['r-2', 'second', 35],
    ]);

    const set = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { backup_reserve_percentage: 50, device_settings: [{ device_id: 'r-2', backup_reserve_percentage: 80 }] });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.device_settings).toEqual([
      { device_id: 'r-1', backup_reserve_percentage: 50, effective_backup_reserve_percentage: 50 },
      { device_id: 'r-2', backup_reserve_percentage: 80, effective_backup_reserve_percentage: 80 },
    ]);
    expect(await reserveOf()).toEqual([
      ['r-1', 'first', 50],
      ['r-1', 'second', 50],
      ['r-2', 'first', 80],
      ['r-2', 'second', 80],
    ]);
    // Updated in place: the same commands, newer.
    const now = await siteCommands(s.siteId, e.id);
    expect(now.map((c) => c.id)).toEqual(before.map((c) => c.id).sort());
    for (const c of now) expect(Date.parse(c.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.find((b) => b.id === c.id).updated_at));

    const cleared = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { device_settings: [{ device_id: 'r-1', backup_reserve_percentage: null }] });
    expect(cleared.body.device_settings[0]).toEqual({ device_id: 'r-1', backup_reserve_percentage: null, effective_backup_reserve_percentage: 20 });
    expect(await reserveOf()).toEqual([
      ['r-1', 'first', 20],
      ['r-1', 'second', 35],
      ['r-2', 'first', 80],
      ['r-2', 'second', 80],
    ]);

    const low = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { backup_reserve_percentage: 19 });
    expectError(low, 400, 'VALIDATION_ERROR');
    expect(low.body.errors).toEqual([{ message: expect.stringContaining('minimum reserve of 20%'), path: 'backup_reserve_percentage' }]);
    const lowDevice = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { device_settings: [{ device_id: 'r-2', backup_reserve_percentage: 5 }] });
    expect(lowDevice.body.errors[0].path).toBe('device_settings/0/backup_reserve_percentage');
    const stranger = await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { device_settings: [{ device_id: 'not-here', backup_reserve_percentage: 50 }] });
    expectError(stranger, 400, 'VALIDATION_ERROR');
    expect(stranger.body.errors[0].path).toBe('device_settings/0/device_id');
    for (const body of [{ backup_reserve_percentage: 101 }, { is_participating: 'yes' }, { unknown: 1 }]) expectError(await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, body), 400, 'VALIDATION_ERROR');
    // Nothing refused was applied.
    expect((await reserveOf())[2]![2]).toBe(80);
  });

  it('a portal session reads and changes its site’s events like a site token', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'PROGRAM', target_ids: [p.id], actions: [discharge(1000)] })).body;
    const session = await t.api.post('/v1/sessions', { site: { id: s.siteId } });
    // Redeemed as the portal page does; the page calls the site's API on the portal listener.
    const redeemed = await redeemPortalSession(t.urls.portal, tokenOfPortalUrl(session.body.portal_url));
    const portal = apiClient(t.urls.portal, redeemed.body.session);
    await waitFor(async () => (await portal.get(`/v1/site/${s.siteId}/events`)).body?.length === 1, { what: 'the event on the site' });
    expect((await portal.patch(`/v1/site/${s.siteId}/event/${e.id}`, { is_participating: false })).body.is_participating).toBe(false);
  });

  it('deleting a device cancels its commands that have not ended; the other devices keep theirs', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p, [batteryWith('keep', 5000), batteryWith('gone', 5000)]);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000)] })).body;
    await waitForCommands(t.api, e.id, 2);
    expect((await s.user.delete(`/v1/site/${s.siteId}/device/gone`)).status).toBe(200);
    await waitFor(async () => (await siteCommands(s.siteId, e.id)).find((c) => c.device_id === 'gone')?.status === 'CANCELED', { what: "the deleted device's command canceled" });
    expect((await siteCommands(s.siteId, e.id)).find((c) => c.device_id === 'keep').status).toBe('OK');
    // A later event reaches only the device that is left.
    const next = await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000)] });
    expect((await waitForCommands(t.api, next.body.id, 1)).map((c) => [c.device_id, c.battery_commands.setpoint_w])).toEqual([['keep', 4000]]);
  });
});
