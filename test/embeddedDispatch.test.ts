import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSystem, type System } from '@efs/cli';
import { SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, apiClient, waitFor, type ApiClient } from '@efs/testing';
import { testSystemEnv } from './harness/system.ts';
import { battery, completeSite, uid } from './enrollmentHelpers.ts';

/**
 * Demand response in the main command's mode (PGlite, one connection for every service, the
 * in-process transport): an event of the sandbox utility, its commands, participation, an
 * acknowledgement, cancellation, a status moved by time, and a settings request to APPLIED.
 */
describe('embedded mode: demand response on PGlite', () => {
  let dataDir: string;
  let system: System | undefined;
  let api: ApiClient;
  let utility: ApiClient;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'efs-embedded-dr-'));
    system = await startSystem({
      ...testSystemEnv(),
      DATA_DIR: dataDir,
      SANDBOX_AUTO_APPROVE_DELAY_MS: '100',
    });
    api = apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN);
    utility = apiClient(system.urls.utility, SANDBOX_UTILITY_API_KEY);
  });
  afterAll(async () => {
    await system?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('an event to an auto-enrolled site: commands, opt-out, acknowledgement, time, cancel; a settings request applied', { timeout: 60_000 }, async () => {
    const siteId = uid('emb');
    const devices = [uid('bat'), uid('bat')];
    const c = await api.post('/v1/commission', { site: { id: siteId, ...completeSite }, devices: devices.map((d) => battery(siteId, d)), can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const programId = c.body.enrollment.program_id as string;
    const user = api.withToken((await api.post(`/v1/auth/site/${siteId}`)).body.site_access_token);

    const soon = { program_id: programId, target_type: 'SITE', target_ids: [siteId] };
    // Each try starts its event a little ahead of when it is sent: approval can take seconds on a
    // loaded machine, and an event computed before the first try would then start in the past.
    const e = await waitFor(async () => {
      const r = await utility.post('/v1/events', { ...soon, actions: [{ starts_at: new Date(Date.now() + 2000).toISOString(), duration_s: 4, mode: 'DISCHARGE', setpoint_w: 3001 }] });
      return r.status === 200 ? r.body : undefined;
    }, { timeoutMs: 20_000, what: 'the sandbox approval reaching dispatch' });
    const commands = (await api.get(`/v1/commands?site_id=${siteId}`)).body;
    expect(commands.map((x: any) => x.battery_commands.setpoint_w).sort()).toEqual([1500, 1501]);
    expect((await api.patch(`/v1/command/${commands[0].id}`, { device_status: 'OK' })).body.device_status).toBe('OK');
    const out = await user.patch(`/v1/site/${siteId}/event/${e.id}`, { is_participating: false, backup_reserve_percentage: 60 });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    for (const x of (await api.get(`/v1/commands?site_id=${siteId}`)).body) expect(x).toMatchObject({ status: 'OPT_OUT', battery_commands: { backup_reserve_percentage: 60 } });
    await waitFor(async () => (await utility.get(`/v1/events/${e.id}`)).body.status === 'COMPLETED', { timeoutMs: 20_000, what: 'COMPLETED by time' });

    const later = await utility.post('/v1/events', { ...soon, actions: [{ starts_at: new Date(Date.now() + 3600_000).toISOString(), duration_s: 600, mode: 'CHARGE' }] });
    expect((await utility.delete(`/v1/events/${later.body.id}`)).body.status).toBe('CANCELED');
    expect((await user.get(`/v1/site/${siteId}/events?status=CANCELED&status=COMPLETED`)).body.map((x: { id: string }) => x.id)).toEqual([later.body.id, e.id]);

    expect((await user.patch(`/v1/site/${siteId}/device/${devices[0]}`, { settings: { backup_reserve_percentage: 45 } })).status).toBe(200);
    const [request] = (await api.get('/v1/settings?status=PENDING')).body;
    expect((await api.patch(`/v1/settings/${request.id}`, { status: 'APPLIED' })).body.status).toBe('APPLIED');
    await waitFor(async () => (await user.get(`/v1/site/${siteId}/device/${devices[0]}`)).body.configuration.reserve_percentage === 45, { what: 'the applied level' });
  });
});
