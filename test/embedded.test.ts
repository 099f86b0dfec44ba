import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSystem, type System } from '@efs/cli';
import { DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, apiClient, matching, parseScrape, total, waitFor, type ApiClient } from '@efs/testing';
import { testSystemEnv } from './harness/system.ts';
import { CAPACITY_TERMS, Sandbox, battery, completeSite, expectEnrollment, expectError, uid } from './enrollmentHelpers.ts';

/**
 * The main command's mode (`efs run` without DATABASE_URL): every service in one process on
 * embedded PGlite, one connection shared by all of them, and the in-process transport. The other
 * system tests run on real Postgres; this one keeps the embedded mode covered, including a
 * restart on the same data folder. Needs no infrastructure.
 */
describe('embedded mode: PGlite and the in-process transport in one process', () => {
  let dataDir: string;
  let system: System | undefined;
  let api: ApiClient;
  let utility: ApiClient;

  const start = async () => {
    system = await startSystem({
      ...testSystemEnv(),
      DATA_DIR: dataDir,
      // The catalog trusts its read model at once, so the restart test sees what reached it.
      CATALOG_SITE_SETTLE_MS: '1',
    });
    api = apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN);
    utility = apiClient(system.urls.utility, SANDBOX_UTILITY_API_KEY);
  };
  const siteApi = async (siteId: string) => {
    const r = await api.post(`/v1/auth/site/${siteId}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return api.withToken(r.body.site_access_token as string);
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'efs-embedded-'));
    await start();
  });
  afterAll(async () => {
    await system?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('runs on PGlite with the in-process transport', () => {
    expect(system!.db.kind).toBe('pglite');
    expect(system!.transport.kind).toBe('in-process');
  });

  it('reads the outboxes, the webhook backlog and the events of the embedded database when scraped', async () => {
    const r = await fetch(`${system!.healthUrl}/metrics`);
    expect(r.status).toBe(200);
    const samples = parseScrape(await r.text());
    for (const service of ['gateway', 'commissioning', 'enrollment', 'program-catalog', 'event-dispatch']) {
      expect(matching(samples, 'efs_outbox_rows_waiting', { service }), service).toHaveLength(1);
      expect(matching(samples, 'efs_outbox_oldest_age_seconds', { service }), service).toHaveLength(1);
      expect(total(samples, 'efs_outbox_rows_quarantined', { service }), service).toBe(0);
    }
    // The webhook backlog and the events by status are read from it too.
    expect(matching(samples, 'efs_webhooks_pending', { service: 'webhooks' })).toHaveLength(1);
    expect(matching(samples, 'efs_webhooks_pending_oldest_age_seconds', { service: 'webhooks' })).toHaveLength(1);
    expect(matching(samples, 'efs_dispatch_events', { service: 'event-dispatch' }).map((s) => s.labels.status).sort()).toEqual(['CANCELED', 'COMPLETED', 'IN_PROGRESS', 'UPCOMING']);
  });

  it('commissions, issues a site token and enrolls: incomplete site, completion, terms and form, sandbox approval', async () => {
    const siteId = uid('emb');
    const deviceId = uid('bat');
    const c = await api.post('/v1/commission', { site: { id: siteId, zip_code: '88801' }, devices: [battery(siteId, deviceId)], can_auto_enroll: false });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(Object.keys(c.body)).toEqual(['programs']);
    expect(c.body.programs.map((p: { id: string }) => p.id).sort()).toEqual([Sandbox.batteryAutoEnroll, Sandbox.batteryCapacity].sort());

    const site = await siteApi(siteId);
    const enroll = { program_id: Sandbox.batteryCapacity, device_ids: [deviceId], has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: CAPACITY_TERMS };
    const incomplete = await site.post(`/v1/site/${siteId}/enrollments`, enroll);
    expectError(incomplete, 422, 'SITE_INFO_INCOMPLETE');
    expect(incomplete.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['city', 'email', 'first_name', 'last_name', 'state_code', 'street_address']);

    expect((await site.patch(`/v1/site/${siteId}`, completeSite)).status).toBe(200);
    expectError(await site.post(`/v1/site/${siteId}/enrollments`, { ...enroll, has_agreed_to_terms_and_conditions: false }), 422, 'TERMS_NOT_ACCEPTED');
    expectError(await site.post(`/v1/site/${siteId}/enrollments`, enroll), 400, 'VALIDATION_ERROR');

    const program = (await site.get(`/v1/site/${siteId}/program/${Sandbox.batteryCapacity}`)).body;
    const answers = program.enrollment_form.map((f: { name: string }) => ({ name: f.name, value: '12345' }));
    const created = await site.post(`/v1/site/${siteId}/enrollments`, { ...enroll, program_specific_attributes: answers });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expectEnrollment(created.body, { site_id: siteId, status: 'PENDING', enroll_method: 'USER_ACTION', terms_and_conditions_version: CAPACITY_TERMS });

    await waitFor(async () => (await site.get(`/v1/site/${siteId}/enrollments`)).body[0]?.status === 'ACTIVE', { what: 'sandbox approval' });
    expectError(await site.delete(`/v1/site/${siteId}/enrollment/${created.body.id}`), 409, 'MINIMUM_COMMITMENT_NOT_MET');
  });

  it('answers 30 concurrent identical enrollments with exactly one enrollment and 409 for the rest, none timing out', async () => {
    const siteId = uid('emb');
    const deviceId = uid('bat');
    expect((await api.post('/v1/commission', { site: { id: siteId, ...completeSite }, devices: [battery(siteId, deviceId)], can_auto_enroll: false })).status).toBe(200);
    const site = await siteApi(siteId);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => site.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: [deviceId] })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array<number>(29).fill(409)]);
    for (const r of answers.filter((x) => x.status === 409)) expectError(r, 409, 'CONFLICT');
    expect((await site.get(`/v1/site/${siteId}/enrollments`)).body).toHaveLength(1);
  });

  it('auto-enrolls at commissioning and lets the utility decide on its listener', async () => {
    const siteId = uid('emb');
    const deviceId = uid('bat');
    const c = await api.post('/v1/commission', { site: { id: siteId, ...completeSite, zip_code: '88800' }, devices: [battery(siteId, deviceId)], can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expectEnrollment(c.body.enrollment, { site_id: siteId, program_id: Sandbox.batteryAutoEnroll, device_ids: [deviceId], enroll_method: 'AUTO_ENROLL', status: 'PENDING' });
    const rejected = await utility.patch(`/v1/enrollments/${c.body.enrollment.id}`, { status: 'REJECTED', status_reason: 'No meter' });
    // The sandbox approves after 300 ms; a rejection that loses that race answers 409.
    const now = (await utility.get(`/v1/enrollments/${c.body.enrollment.id}`)).body;
    if (rejected.status === 200) expect([rejected.body.status, now.status, now.status_reason]).toEqual(['REJECTED', 'REJECTED', 'No meter']);
    else expect([rejected.status, now.status]).toEqual([409, 'ACTIVE']);
  });

  // A fresh embedded database takes PGlite's initdb, tens of seconds on a busy machine.
  it('releases the data folder when a start fails (a port in use), so the next start can open it', { timeout: 120_000 }, async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'efs-embedded-'));
    try {
      const env = { LOG_LEVEL: 'silent', DATA_DIR: otherDir, UTILITY_PORT: '0', PORTAL_PORT: '0', SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY };
      await expect(startSystem({ ...env, PORT: new URL(system!.urls.public).port })).rejects.toThrow(/EADDRINUSE/);
      expect(existsSync(join(otherDir, 'pgdata.lock'))).toBe(false);
      const second = await startSystem({ ...env, PORT: '0' });
      expect((await apiClient(second.urls.public, SANDBOX_CLIENT_TOKEN).get('/v1/programs')).body).toHaveLength(3);
      await second.stop();
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  });

  it('keeps its data across a restart on the same data folder: no second sandbox catalog, no migration re-run, and site changes made just before the stop reach the read models', async () => {
    const sites = Array.from({ length: 30 }, () => uid('emb'));
    for (const id of sites) expect((await api.post('/v1/commission', { site: { id, ...completeSite }, devices: [battery(id, uid('bat'))], can_auto_enroll: false })).status).toBe(200);
    const clients = await Promise.all(sites.map((id) => siteApi(id)));
    const migrations = async () => Number(((await system!.db.knex.withSchema('catalog').table('knex_migrations').count({ n: '*' })) as [{ n: string | number }])[0].n);
    const migrationsBefore = await migrations();
    const listed = (await api.get('/v1/sites?limit=1000')).body.map((s: { id: string }) => s.id);

    // Move every site out of the sandbox area, then stop at once: the updates are still on their
    // way to the catalog's read model when the stop begins.
    const moved = await Promise.all(sites.map((id, i) => clients[i]!.patch(`/v1/site/${id}`, { zip_code: '88803' })));
    expect(moved.every((r) => r.status === 200)).toBe(true);
    await system!.stop();
    system = undefined;
    await start();

    expect((await api.get('/v1/sites?limit=1000')).body.map((s: { id: string }) => s.id)).toEqual(listed);
    expect((await api.get('/v1/programs')).body).toHaveLength(3);
    expect(await migrations()).toBe(migrationsBefore);
    for (const id of sites) {
      const site = await siteApi(id);
      expect((await site.get(`/v1/site/${id}`)).body.zip_code).toBe('88803');
      expect((await site.get(`/v1/site/${id}/programs`)).body, id).toEqual([]);
    }
  });

  it('ingests telemetry on PGlite (COPY from a blob into day partitions) and knows the devices at once after a restart', async () => {
    const siteId = uid('emb');
    const deviceId = uid('bat');
    const c = await api.post('/v1/commission', { site: { id: siteId, ...completeSite, zip_code: '88800' }, devices: [battery(siteId, deviceId)], can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const t0 = Date.UTC(2026, 0, 15, 10);
    const at = (m: number) => new Date(t0 + m * 60_000).toISOString();
    const accepted = async (path: string, telemetry: unknown[]) => (await api.post(path, { telemetry })).body.results.every((x: { status: string }) => x.status === 'OK');
    await waitFor(() => accepted('/v1/telemetry/BATTERY', [{ device_id: deviceId, start_time: at(0), duration_s: 300, last_mode: 'tab\there', oem_raw_data: { firmware: 'v1\nbeta' } }]), { what: 'the device known to the gateway' });
    expect(await accepted('/v1/telemetry/BATTERY_COUNTER', [0, 5].map((m, i) => ({ device_id: deviceId, timestamp: at(10 + m), battery_lifetime_energy_charge_wh: 10 * i, battery_lifetime_energy_discharge_wh: 20 * i })))).toBe(true);
    const read = async () => (await utility.post('/v1/telemetry/historical', { program_id: Sandbox.batteryAutoEnroll, device_ids: [deviceId], start_time: at(0), end_time: at(60) })).body;
    const rows = await waitFor(async () => ((await read()).length === 2 ? read() : undefined), { what: 'the reading and the counter interval' });
    expect(rows.map((r: any) => [r.start_time, r.duration_s, r.last_mode, r.battery_total_energy_discharge_wh])).toEqual([
      [at(0), 300, 'tab\there', null],
      [at(10), 300, null, 20],
    ]);

    await system!.stop();
    system = undefined;
    await start();
    // The gateway's directory of devices was kept in its schema: no wait for any topic.
    expect(await accepted('/v1/telemetry/BATTERY', [{ device_id: deviceId, start_time: at(20), duration_s: 300 }])).toBe(true);
    await waitFor(async () => (await read()).length === 3, { what: 'the reading sent after the restart' });
  });
});
