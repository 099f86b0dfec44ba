import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { credentialCommand } from '@efs/cli';
import {
  ACTION_KEYS,
  EVENT_KEYS,
  ISO,
  batteryWith,
  commandsOf,
  createEvent,
  discharge,
  enrolledSite,
  evCharger,
  expectError,
  inSeconds,
  newProgram,
  uid,
  waitForCommands,
} from './dispatchHelpers.ts';

const run = await tierAvailable('postgres');

/** The utility's side of demand response over HTTP: events of every target type, bad events, cancellation, time. */
describe.runIf(run)('demand-response events on the utility API', () => {
  const t = useTestSystem();
  let otherIntegrator: ApiClient;
  let otherUtility: ApiClient;

  /** A credential made with the CLI against the running system's database, as an operator does. */
  const cli = async (kind: 'client-token' | 'utility-key', owner: string) => {
    const out: string[] = [];
    const flag = kind === 'client-token' ? '--integrator' : '--utility';
    expect(await credentialCommand(kind, 'create', [flag, owner], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    return /token: (\S+)/.exec(out.join('\n'))![1]!;
  };

  beforeAll(async () => {
    otherIntegrator = apiClient(t.urls.public, await cli('client-token', 'integrator-b'));
    otherUtility = apiClient(t.urls.utility, await cli('utility-key', 'utility-b'));
    await waitFor(async () => (await otherIntegrator.get('/v1/sites')).status === 200 && (await otherUtility.get('/v1/programs')).status === 200, { what: 'new credentials known' });
  });

  it('a SITE event: every field, each action with all eight, commands split EVEN capped by rated power', async () => {
    const p = await newProgram(t, { minimum_reserve_percentage: 20 });
    const s = await enrolledSite(t, p, [batteryWith('b-small', 1000), batteryWith('b-big', 5000), batteryWith('b-mid', 5000)]);
    const now = Date.now();
    const body = {
      program_id: p.id,
      target_type: 'SITE',
      target_ids: [s.siteId],
      actions: [
        discharge(9000, 3600, 1800, { starts_at: inSeconds(3600, now) }),
        { starts_at: inSeconds(5400, now), duration_s: 600, mode: 'CHARGE', power_mode: 'FOLLOW_LOAD', backup_reserve_percentage: 50, enable_grid_import: true },
        { starts_at: inSeconds(6000, now), duration_s: 600, mode: 'STANDBY' },
      ],
    };
    const r = await createEvent(t, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const e = r.body;
    expect(Object.keys(e).sort()).toEqual(EVENT_KEYS);
    for (const a of e.actions) expect(Object.keys(a).sort()).toEqual(ACTION_KEYS);
    expect(e).toMatchObject({ program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], status: 'UPCOMING', starts_at: body.actions[0]!.starts_at, duration_s: 5400 + 600 + 600 - 3600 });
    expect(Date.parse(e.ends_at) - Date.parse(e.starts_at)).toBe(e.duration_s * 1000);
    for (const k of ['created_at', 'updated_at', 'starts_at', 'ends_at']) expect(e[k]).toMatch(ISO);
    expect(e.actions).toEqual([
      { starts_at: body.actions[0]!.starts_at, duration_s: 1800, mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_mode: 'EVEN', setpoint_w: 9000, backup_reserve_percentage: 20, enable_grid_import: false },
      { starts_at: body.actions[1]!.starts_at, duration_s: 600, mode: 'CHARGE', power_mode: 'FOLLOW_LOAD', setpoint_mode: null, setpoint_w: null, backup_reserve_percentage: 50, enable_grid_import: true },
      { starts_at: body.actions[2]!.starts_at, duration_s: 600, mode: 'STANDBY', power_mode: null, setpoint_mode: null, setpoint_w: null, backup_reserve_percentage: 20, enable_grid_import: false },
    ]);
    expect((await t.utility.get(`/v1/events/${e.id}`)).body).toEqual(e);

    const commands = await waitForCommands(t.api, e.id, 9);
    const of = (action: number) => commands.filter((c) => c.starts_at === body.actions[action]!.starts_at).sort((a, b) => a.device_id.localeCompare(b.device_id));
    // 9000 W over three devices: 3000 each, the 1000 W battery capped at its rating.
    expect(of(0).map((c) => [c.device_id, c.battery_commands])).toEqual([
      ['b-big', { mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 3000, backup_reserve_percentage: 20, enable_grid_import: false }],
      ['b-mid', { mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 3000, backup_reserve_percentage: 20, enable_grid_import: false }],
      ['b-small', { mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 1000, backup_reserve_percentage: 20, enable_grid_import: false }],
    ]);
    for (const c of of(1)) expect(c.battery_commands).toEqual({ mode: 'CHARGE', power_mode: 'FOLLOW_LOAD', setpoint_w: null, backup_reserve_percentage: 50, enable_grid_import: true });
    for (const c of of(2)) expect(c.battery_commands).toMatchObject({ mode: 'STANDBY', power_mode: null, setpoint_w: null });
    for (const c of commands) expect(c).toMatchObject({ event_id: e.id, site_id: s.siteId, status: 'OK', device_status: 'PENDING', device_status_reason: null, duration_s: (Date.parse(c.ends_at) - Date.parse(c.starts_at)) / 1000 });

    const sites = await t.utility.get(`/v1/events/${e.id}/sites`);
    expect(sites.body).toEqual([
      { site_id: s.siteId, is_participating: true, performance_expected_energy_wh: 3500, performance_actual_energy_wh: null, performance_expected_power_w: 3500 * 3600 / e.duration_s, performance_actual_power_w: null },
    ]);
  });

  it('DEVICE, GROUP and PROGRAM targets reach exactly their devices', async () => {
    const p = await newProgram(t);
    const groupA = (await t.utility.post(`/v1/programs/${p.id}/groups`, { id: 'north', name: 'North' })).body.id;
    const one = await enrolledSite(t, p, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)], { groupIds: [groupA] });
    const two = await enrolledSite(t, p, [(s) => evCharger(s, uid('ev'))]);
    const targetsOf = async (body: Record<string, unknown>, n: number) => {
      const r = await createEvent(t, { program_id: p.id, actions: [discharge(1000)], ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (await waitForCommands(t.api, r.body.id, n)).map((c) => c.device_id).sort();
    };
    expect(await targetsOf({ target_type: 'DEVICE', target_ids: [one.devices[1], two.devices[0]] }, 2)).toEqual([one.devices[1], two.devices[0]].sort());
    expect(await targetsOf({ target_type: 'GROUP', target_ids: [groupA] }, 2)).toEqual([...one.devices].sort());
    expect(await targetsOf({ target_type: 'PROGRAM', target_ids: [p.id] }, 3)).toEqual([...one.devices, ...two.devices].sort());
    const program = await createEvent(t, { program_id: p.id, target_type: 'PROGRAM', target_ids: [], actions: [discharge(1000)] });
    expect(program.body.target_ids).toEqual([p.id]);
    // A charger cannot discharge: its share is capped at 0 W.
    const cmds = await waitForCommands(t.api, program.body.id, 3);
    expect(cmds.find((c) => c.device_id === two.devices[0]).battery_commands.setpoint_w).toBe(0);
    // Grouped after the fact with group_ids alone: the next GROUP event reaches the new member.
    const grouped = await t.utility.patch(`/v1/enrollments/${two.enrollmentId}`, { group_ids: [groupA] });
    expect(grouped.body).toMatchObject({ status: 'ACTIVE', group_ids: [groupA] });
    await waitFor(async () => {
      const r = await t.utility.post('/v1/events', { program_id: p.id, target_type: 'GROUP', target_ids: [groupA], actions: [discharge(1000)] });
      return (await commandsOf(t.api, r.body.id)).length === 3;
    }, { what: 'the regrouped enrollment reached' });
  });

  it('refuses bad events: 400 for the body and for ended or overlapping actions, 404 for unknown or foreign programs and targets, 409 for no ACTIVE device', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p);
    const ok = { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000)] };
    await waitFor(async () => (await t.utility.post('/v1/events', ok)).status === 200, { what: 'dispatch knows the site' });
    const bad: [Record<string, unknown>, string][] = [
      [{ ...ok, actions: [] }, 'actions'],
      [{ ...ok, target_type: 'HOUSE' }, 'target_type'],
      [{ ...ok, target_ids: [] }, 'target_ids'],
      [{ ...ok, target_type: 'PROGRAM', target_ids: ['another'] }, 'target_ids/0'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: 60 }] }, 'actions/0/mode'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: -5, mode: 'CHARGE' }] }, 'actions/0/duration_s'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: 60, mode: 'DISCHARGE', power_mode: 'SETPOINT' }] }, 'actions/0/setpoint_w'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: 60, mode: 'STANDBY', setpoint_w: 10 }] }, 'actions/0/setpoint_w'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: 60, mode: 'DISCHARGE', setpoint_w: 0 }] }, 'actions/0/setpoint_w'],
      [{ ...ok, actions: [{ starts_at: inSeconds(60), duration_s: 60, mode: 'CHARGE', backup_reserve_percentage: 120 }] }, 'actions/0/backup_reserve_percentage'],
      [{ ...ok, actions: [{ starts_at: 'tomorrow', duration_s: 60, mode: 'CHARGE' }] }, 'actions/0/starts_at'],
      [{ ...ok, actions: [{ starts_at: inSeconds(-120), duration_s: 60, mode: 'CHARGE' }] }, 'actions/0/starts_at'],
      [{ ...ok, actions: [discharge(100, 60, 600), discharge(100, 300, 60)] }, 'actions/1/starts_at'],
    ];
    for (const [body, path] of bad) {
      const r = await t.utility.post('/v1/events', body);
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path), JSON.stringify(body)).toContain(path);
    }
    expectError(await t.utility.post('/v1/events', '{"program_id": '), 400, 'VALIDATION_ERROR');

    expectError(await t.utility.post('/v1/events', { ...ok, program_id: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
    const foreign = (await otherUtility.post('/v1/programs', { name: 'Theirs', eligible_device_types: ['BATTERY'], zip_codes: [p.zip] })).body;
    expectError(await t.utility.post('/v1/events', { ...ok, program_id: foreign.id }), 404, 'NOT_FOUND');
    const unknown = await t.utility.post('/v1/events', { ...ok, target_ids: [s.siteId, 'no-such-site'] });
    expectError(unknown, 404, 'NOT_FOUND');
    expect(unknown.body.errors).toEqual([{ message: expect.stringContaining('no-such-site'), path: 'target_ids/1' }]);
    expectError(await t.utility.post('/v1/events', { ...ok, target_type: 'GROUP', target_ids: ['nope'] }), 404, 'NOT_FOUND');

    // Known to the program but not ACTIVE: a PENDING enrollment, an empty group, a program with no ACTIVE device.
    const siteId = uid('site');
    await t.api.post('/v1/commission', { site: { id: siteId, first_name: 'A', last_name: 'B', email: 'a@example.com', state_code: 'CA', city: 'X', street_address: '1 Way', zip_code: p.zip }, devices: [batteryWith('pending-b', 5000)(siteId)], can_auto_enroll: false });
    const pendingUser = apiClient(t.urls.public, (await t.api.post(`/v1/auth/site/${siteId}`)).body.site_access_token);
    await waitFor(async () => (await pendingUser.post(`/v1/site/${siteId}/enrollments`, { program_id: p.id, device_ids: ['pending-b'] })).status === 200, { what: 'pending enrollment' });
    await waitFor(async () => (await t.utility.post('/v1/events', { ...ok, target_ids: [siteId] })).status === 409, { what: 'dispatch knows the pending enrollment' });
    const pending = await t.utility.post('/v1/events', { ...ok, target_type: 'DEVICE', target_ids: ['pending-b'] });
    expectError(pending, 409, 'CONFLICT');
    expect(pending.body.message).toMatch(/no device with an ACTIVE enrollment/);
    await t.utility.post(`/v1/programs/${p.id}/groups`, { id: 'empty', name: 'Empty' });
    await waitFor(async () => (await t.utility.post('/v1/events', { ...ok, target_type: 'GROUP', target_ids: ['empty'] })).status === 409, { what: 'an empty group is a 409' });
    const idle = await newProgram(t);
    const none = await waitFor(async () => {
      const r = await t.utility.post('/v1/events', { program_id: idle.id, target_type: 'PROGRAM', target_ids: [], actions: [discharge(1000)] });
      return r.status === 404 ? undefined : r;
    }, { what: 'dispatch knows the new program' });
    expectError(none, 409, 'CONFLICT');
  });

  it('refuses a SITE or DEVICE id that two integrators use in the program (409 naming it); a GROUP reaches both', async () => {
    const p = await newProgram(t);
    const shared = uid('shared');
    const device = uid('dev');
    const groupId = (await t.utility.post(`/v1/programs/${p.id}/groups`, { name: 'Both' })).body.id;
    await enrolledSite(t, p, [batteryWith(device, 5000)], { siteId: shared, groupIds: [groupId] });
    await enrolledSite(t, p, [batteryWith(device, 5000)], { siteId: shared, client: otherIntegrator, groupIds: [groupId] });
    for (const [type, id] of [['SITE', shared], ['DEVICE', device]] as const) {
      const r = await waitFor(async () => {
        const x = await t.utility.post('/v1/events', { program_id: p.id, target_type: type, target_ids: [id], actions: [discharge(1000)] });
        return x.status === 409 && /ambiguous/.test(x.body.message) ? x : undefined;
      }, { what: `${type} ${id} ambiguous` });
      expectError(r, 409, 'CONFLICT');
      expect(r.body.errors).toEqual([{ message: expect.stringContaining(id), path: 'target_ids/0' }]);
    }
    // Ambiguity shows as soon as B's enrollment is known (PENDING); the group reaches B once dispatch has its approval too.
    const group = await waitFor(async () => {
      const r = await t.utility.post('/v1/events', { program_id: p.id, target_type: 'GROUP', target_ids: [groupId], actions: [discharge(1000)] });
      return r.status === 200 && (await commandsOf(otherIntegrator, r.body.id)).length === 1 ? r : undefined;
    }, { what: 'a GROUP event reaching both integrators' });
    expect(await commandsOf(t.api, group.body.id)).toHaveLength(1);
    expect((await commandsOf(otherIntegrator, group.body.id))[0].device_id).toBe(device);
  });

  it('lists events newest start first, by program and by status; another utility sees none of them', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p);
    const later = await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000, 7200)] });
    const sooner = await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000, 3600)] });
    const canceled = await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000, 5400)] });
    await t.utility.delete(`/v1/events/${canceled.body.id}`);
    const ids = (r: { body: { id: string }[] }) => r.body.map((e) => e.id);
    expect(ids(await t.utility.get(`/v1/events?program_id=${p.id}`))).toEqual([later.body.id, canceled.body.id, sooner.body.id]);
    expect(ids(await t.utility.get(`/v1/events?program_id=${p.id}&status=UPCOMING`))).toEqual([later.body.id, sooner.body.id]);
    expect(ids(await t.utility.get(`/v1/events?program_id=${p.id}&status=CANCELED&status=COMPLETED`))).toEqual([canceled.body.id]);
    expect(ids(await t.utility.get(`/v1/events?program_id=${p.id}&limit=1&skip=1`))).toEqual([canceled.body.id]);
    expect(ids(await t.utility.get('/v1/events?limit=1000'))).toEqual(expect.arrayContaining([later.body.id, sooner.body.id]));
    expectError(await t.utility.get('/v1/events?status=SOON'), 400, 'VALIDATION_ERROR');

    expect(await otherUtility.get('/v1/events').then((r) => r.body)).toEqual([]);
    expectError(await otherUtility.get(`/v1/events?program_id=${p.id}`), 404, 'NOT_FOUND');
    for (const path of [`/v1/events/${later.body.id}`, `/v1/events/${later.body.id}/sites`, '/v1/events/not-a-uuid']) expectError(await otherUtility.get(path), 404, 'NOT_FOUND');
    expectError(await otherUtility.delete(`/v1/events/${later.body.id}`), 404, 'NOT_FOUND');
    expect((await t.utility.get(`/v1/events/${later.body.id}`)).body.status).toBe('UPCOMING');
  });

  it('cancel: the event CANCELED, its commands CANCELED; canceling again answers it unchanged', async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)]);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(4000)] })).body;
    await waitForCommands(t.api, e.id, 2);
    const canceled = await t.utility.delete(`/v1/events/${e.id}`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ id: e.id, status: 'CANCELED' });
    expect(Date.parse(canceled.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(e.updated_at));
    for (const c of await commandsOf(t.api, e.id)) expect(c).toMatchObject({ status: 'CANCELED' });
    expect((await t.utility.delete(`/v1/events/${e.id}`)).body).toEqual(canceled.body);
    expect((await t.utility.get(`/v1/events/${e.id}/sites`)).body).toEqual([expect.objectContaining({ site_id: s.siteId, performance_expected_energy_wh: 0 })]);
    expectError(await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { is_participating: false }), 409, 'EVENT_NOT_MODIFIABLE');
  });

  it('moves UPCOMING → IN_PROGRESS → COMPLETED by time alone; a completed event cannot be canceled or changed', { timeout: 60_000 }, async () => {
    const p = await newProgram(t);
    const s = await enrolledSite(t, p);
    const e = (await createEvent(t, { program_id: p.id, target_type: 'SITE', target_ids: [s.siteId], actions: [discharge(1000, 3, 3)] })).body;
    expect(e.status).toBe('UPCOMING');
    const statusOf = async () => (await t.utility.get(`/v1/events/${e.id}`)).body;
    const running = await waitFor(async () => ((await statusOf()).status === 'IN_PROGRESS' ? statusOf() : undefined), { what: 'IN_PROGRESS', timeoutMs: 20_000, intervalMs: 100 });
    expect(running.updated_at).toBe(e.starts_at);
    expect((await s.user.get(`/v1/site/${s.siteId}/event/${e.id}`)).body.status).toBe('IN_PROGRESS');
    const done = await waitFor(async () => {
      const x = await statusOf();
      return x.status === 'COMPLETED' ? x : undefined;
    }, { what: 'COMPLETED', timeoutMs: 20_000, intervalMs: 100 });
    expect(done.updated_at).toBe(e.ends_at);
    expectError(await t.utility.delete(`/v1/events/${e.id}`), 409, 'EVENT_NOT_MODIFIABLE');
    expectError(await s.user.patch(`/v1/site/${s.siteId}/event/${e.id}`, { backup_reserve_percentage: 50 }), 409, 'EVENT_NOT_MODIFIABLE');
    expect((await t.utility.get(`/v1/events?program_id=${p.id}&status=COMPLETED`)).body.map((x: { id: string }) => x.id)).toEqual([e.id]);
  });
});
