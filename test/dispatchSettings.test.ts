import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { credentialCommand } from '@efs/cli';
import { ISO, asSite, battery, batteryWith, createEvent, discharge, enrolledSite, expectError, newProgram, uid, waitForCommands } from './dispatchHelpers.ts';
import { completeSite } from './enrollmentHelpers.ts';

const run = await tierAvailable('postgres');
const SETTINGS_KEYS = ['created_at', 'device_id', 'id', 'settings', 'site_id', 'status', 'status_reason', 'updated_at'];

/** Settings requests: the end user sets a device's own reserve, the device cloud applies it. */
describe.runIf(run)('settings requests from the end user to APPLIED', () => {
  const t = useTestSystem();
  let other: ApiClient;
  beforeAll(async () => {
    const out: string[] = [];
    expect(await credentialCommand('client-token', 'create', ['--integrator', 'integrator-b'], { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) })).toBe(0);
    other = apiClient(t.urls.public, /token: (\S+)/.exec(out.join('\n'))![1]);
    await waitFor(async () => (await other.get('/v1/settings')).status === 200, { what: "integrator B's token" });
  });

  /** A commissioned site with one battery (not enrolled), and its end user. */
  async function siteWithBattery(): Promise<{ siteId: string; deviceId: string; user: ApiClient }> {
    const siteId = uid('site');
    const deviceId = uid('b');
    const c = await t.api.post('/v1/commission', { site: { id: siteId, ...completeSite }, devices: [battery(siteId, deviceId)], can_auto_enroll: false });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    return { siteId, deviceId, user: await asSite(t, siteId) };
  }
  const mine = async (siteId: string, query = '') => ((await t.api.get(`/v1/settings?limit=1000${query}`)).body as any[]).filter((r) => r.site_id === siteId);

  it('PATCH of the device creates one; the cloud lists it, applies it, and the device shows the level', async () => {
    const { siteId, deviceId: b1, user } = await siteWithBattery();
    const patched = await user.patch(`/v1/site/${siteId}/device/${b1}`, { serial_number: 'SN-NEW', settings: { backup_reserve_percentage: 40 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ serial_number: 'SN-NEW', configuration: { reserve_percentage: 0 } });

    const [request] = await mine(siteId);
    expect(Object.keys(request).sort()).toEqual(SETTINGS_KEYS);
    expect(request).toMatchObject({ device_id: b1, site_id: siteId, settings: { backup_reserve_percentage: 40 }, status: 'PENDING', status_reason: null });
    expect(request.created_at).toMatch(ISO);
    expect((await mine(siteId, '&status=PENDING')).map((r) => r.id)).toEqual([request.id]);
    expect(await mine(siteId, '&status=APPLIED&status=FAILED')).toEqual([]);

    const applied = await t.api.patch(`/v1/settings/${request.id}`, { status: 'APPLIED' });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ id: request.id, status: 'APPLIED', status_reason: null });
    const device = await waitFor(async () => {
      const d = (await user.get(`/v1/site/${siteId}/device/${b1}`)).body;
      return d.configuration.reserve_percentage === 40 ? d : undefined;
    }, { what: 'the applied level on the device' });
    expect(device.serial_number).toBe('SN-NEW');
    // The same outcome again changes nothing; another outcome of a settled request is 409.
    expect((await t.api.patch(`/v1/settings/${request.id}`, { status: 'APPLIED' })).body).toEqual(applied.body);
    expectError(await t.api.patch(`/v1/settings/${request.id}`, { status: 'FAILED' }), 409, 'CONFLICT');
  });

  it('a newer request supersedes a pending one; FAILED carries the reason; bad input and other tenants are refused', async () => {
    const { siteId, deviceId: b1, user } = await siteWithBattery();
    await user.patch(`/v1/site/${siteId}/device/${b1}`, { settings: { backup_reserve_percentage: 30 } });
    await user.patch(`/v1/site/${siteId}/device/${b1}`, { settings: { backup_reserve_percentage: 35 } });
    const [first, second] = await mine(siteId);
    expect(first).toMatchObject({ status: 'FAILED', status_reason: expect.stringMatching(/superseded/i), settings: { backup_reserve_percentage: 30 } });
    expect(second).toMatchObject({ status: 'PENDING', settings: { backup_reserve_percentage: 35 } });
    expectError(await t.api.patch(`/v1/settings/${first.id}`, { status: 'APPLIED' }), 409, 'CONFLICT');
    const failed = await t.api.patch(`/v1/settings/${second.id}`, { status: 'FAILED', status_reason: 'Device offline' });
    expect(failed.body).toMatchObject({ status: 'FAILED', status_reason: 'Device offline' });
    expect((await user.get(`/v1/site/${siteId}/device/${b1}`)).body.configuration.reserve_percentage).toBe(0);

    for (const body of [{ status: 'PENDING' }, { status: 'DONE' }, {}, { status: 'APPLIED', extra: true }]) expectError(await t.api.patch(`/v1/settings/${second.id}`, body), 400, 'VALIDATION_ERROR');
    for (const settings of [{ backup_reserve_percentage: 101 }, { backup_reserve_percentage: -1 }, { reserve: 10 }]) expectError(await user.patch(`/v1/site/${siteId}/device/${b1}`, { settings }), 400, 'VALIDATION_ERROR');
    expectError(await t.api.get('/v1/settings?status=LATER'), 400, 'VALIDATION_ERROR');
    expectError(await user.patch(`/v1/site/${siteId}/device/nope`, { settings: { backup_reserve_percentage: 50 } }), 404, 'NOT_FOUND');
    expectError(await other.patch(`/v1/settings/${second.id}`, { status: 'APPLIED' }), 404, 'NOT_FOUND');
    expect((await other.get('/v1/settings')).body).toEqual([]);
    expectError(await t.api.patch('/v1/settings/00000000-0000-4000-8000-000000000000', { status: 'APPLIED' }), 404, 'NOT_FOUND');
  });

  it("below the minimum of a program the device is ACTIVE in: 400, nothing created; the applied level moves the commands that follow the device's own", async () => {
    const floor = await newProgram(t, { minimum_reserve_percentage: 25 });
    const s = await enrolledSite(t, floor, [batteryWith('fl-1', 5000)]);
    // An event reaching the device: dispatch knows it is ACTIVE in the program.
    expect((await createEvent(t, { program_id: floor.id, target_type: 'DEVICE', target_ids: ['fl-1'], actions: [discharge(1000)] })).status).toBe(200);
    expectError(await s.user.patch(`/v1/site/${s.siteId}/device/fl-1`, { settings: { backup_reserve_percentage: 24 } }), 400, 'VALIDATION_ERROR');
    const low = await s.user.patch(`/v1/site/${s.siteId}/device/fl-1`, { serial_number: 'changed?', settings: { backup_reserve_percentage: 10 } });
    expectError(low, 400, 'VALIDATION_ERROR');
    expect(low.body.errors).toEqual([{ message: expect.stringContaining('minimum reserve'), path: 'settings/backup_reserve_percentage' }]);
    expect((await s.user.get(`/v1/site/${s.siteId}/device/fl-1`)).body.serial_number).not.toBe('changed?');
    expect(await mine(s.siteId)).toEqual([]);
    expect((await s.user.patch(`/v1/site/${s.siteId}/device/fl-1`, { settings: { backup_reserve_percentage: 25 } })).status).toBe(200);

    // A program without a minimum: the commands carry the device's own level and follow it.
    const open = await newProgram(t, { minimum_reserve_percentage: 0 });
    const o = await enrolledSite(t, open, [batteryWith('own-1', 5000)]);
    const e = (await createEvent(t, { program_id: open.id, target_type: 'SITE', target_ids: [o.siteId], actions: [discharge(1000)] })).body;
    const [before] = await waitForCommands(t.api, e.id, 1);
    expect(before.battery_commands.backup_reserve_percentage).toBe(0);
    await o.user.patch(`/v1/site/${o.siteId}/device/own-1`, { settings: { backup_reserve_percentage: 55 } });
    const [request] = await mine(o.siteId);
    await t.api.patch(`/v1/settings/${request.id}`, { status: 'APPLIED' });
    await waitFor(async () => (await t.api.get(`/v1/commands?device_id=own-1`)).body[0]?.battery_commands.backup_reserve_percentage === 55, { what: 'the command following the device level' });
    const after = (await t.api.get(`/v1/commands?device_id=own-1`)).body[0];
    expect(after.id).toBe(before.id);
    expect((await o.user.get(`/v1/site/${o.siteId}/event/${e.id}`)).body.device_settings).toEqual([{ device_id: 'own-1', backup_reserve_percentage: null, effective_backup_reserve_percentage: 55 }]);
  });
});
