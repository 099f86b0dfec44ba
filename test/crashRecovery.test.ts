/**
 * Events survive a crash of the main command. `node cli/src/main.ts run` (in-process transport,
 * on PGlite and on Postgres) is killed with SIGKILL, and stopped with SIGTERM, while clients
 * commission sites; after the restarts every acknowledged site shows, through the HTTP API, the
 * programs and earnings its commissioning answered, and the read models hold every one of its
 * devices. Read models damaged by earlier versions are repaired by re-announcing the owners'
 * state (once at start, or `efs read-models rebuild`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startSystem } from '@efs/cli';
import { openDatabase, type Knex } from '@efs/db';
import { createLogger } from '@efs/logging';
import {
  apiClient,
  createTestDatabase,
  DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
  freePort,
  SANDBOX_CLIENT_TOKEN,
  SANDBOX_UTILITY_API_KEY,
  tierAvailable,
  waitFor,
  type ApiClient,
  type TestDatabase,
} from '@efs/testing';
import { battery, evCharger, uid } from './commissioningHelpers.ts';
import { testSystemEnv } from './harness/system.ts';

const postgres = await tierAvailable('postgres');
const INTEGRATOR = 'sandbox-integrator';

interface Acknowledged {
  siteId: string;
  deviceIds: string[];
  /** [program id, upfront, yearly] of the commissioning answer, sorted. */
  programs: [string, number, number][];
}

const summary = (programs: { id: string; earnings_for_site_upfront: number; earnings_for_site_yearly: number }[]): [string, number, number][] =>
  programs.map((p): [string, number, number] => [p.id, p.earnings_for_site_upfront, p.earnings_for_site_yearly]).sort((a, b) => a[0].localeCompare(b[0]));

/** `node cli/src/main.ts run` as its own process. */
class MainCommand {
  readonly child: ChildProcess;
  readonly output: string[] = [];
  readonly exited: Promise<void>;

  private constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, ['cli/src/main.ts', 'run'], { cwd: process.cwd(), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => {
      this.output.push(...b.toString().split('\n').filter(Boolean));
      if (this.output.length > 300) this.output.splice(0, this.output.length - 300);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  static async start(env: Record<string, string>): Promise<MainCommand> {
    const m = new MainCommand(env);
    await waitFor(() => m.output.some((l) => l.includes('is running')) || m.child.exitCode !== null, { timeoutMs: 90_000, intervalMs: 100, what: 'the main command to start' });
    if (m.child.exitCode !== null) throw new Error(`the main command exited:\n${m.output.slice(-30).join('\n')}`);
    return m;
  }

  async stop(signal: NodeJS.Signals): Promise<void> {
    this.child.kill(signal);
    await this.exited;
  }
}

/** Eight clients commissioning sites (batteries and chargers of assorted sizes) until told to stop. */
function commissioningLoad(api: () => ApiClient) {
  const acknowledged = new Map<string, Acknowledged>();
  let stopped = false;
  let n = 0;
  const worker = async () => {
    while (!stopped) {
      const siteId = uid('crash');
      const i = n++;
      const devices = [
        ...(i % 3 !== 2 ? [battery(siteId, uid('bat'), { attributes: { battery_capacity_wh: 5000 + (i % 7) * 1000, battery_power_input_w: 3000 + (i % 5) * 500, battery_power_output_w: 2000 + (i % 4) * 1000 } })] : []),
        ...(i % 3 !== 0 ? [evCharger(siteId, uid('ev'), { attributes: { max_charge_power_w: 7000 + (i % 3) * 2000 } })] : []),
      ];
      try {
        const r = await api().post('/v1/commission', { site: { id: siteId, zip_code: ['88800', '88801', '88802'][i % 3] }, devices, can_auto_enroll: false });
        if (r.status === 200) acknowledged.set(siteId, { siteId, deviceIds: devices.map((d) => d.id), programs: summary(r.body.programs) });
      } catch {
        // The process is down (killed or restarting): try again shortly, as a client would.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const running = Array.from({ length: 8 }, worker);
  return {
    acknowledged,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** Every acknowledged site's programs and earnings, through the API, as its commissioning answered them. */
async function mismatches(api: ApiClient, sites: Acknowledged[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const s of sites) {
    const token = await api.post(`/v1/auth/site/${s.siteId}`);
    if (token.status !== 200) {
      wrong.push(`${s.siteId}: site token ${token.status}`);
      continue;
    }
    const r = await api.withToken(token.body.site_access_token).get(`/v1/site/${s.siteId}/programs`);
    const got = r.status === 200 ? summary(r.body) : r.status;
    if (JSON.stringify(got) !== JSON.stringify(s.programs)) wrong.push(`${s.siteId}: ${JSON.stringify(got)} instead of ${JSON.stringify(s.programs)}`);
  }
  return wrong;
}

/** Devices of the acknowledged sites missing from the catalog's and enrollment's read models. */
async function missingFromReadModels(knex: Knex, sites: Acknowledged[]): Promise<string[]> {
  const deviceIds = sites.flatMap((s) => s.deviceIds);
  const siteIds = sites.map((s) => s.siteId);
  const catalogDevices = new Set(((await knex.withSchema('catalog').table('device_views').where({ integrator_id: INTEGRATOR, deleted: false }).whereIn('device_id', deviceIds).select('device_id')) as { device_id: string }[]).map((r) => r.device_id));
  const enrollmentDevices = new Set(((await knex.withSchema('enrollment').table('devices').where({ integrator_id: INTEGRATOR, deleted: false }).whereIn('id', deviceIds).select('id')) as { id: string }[]).map((r) => r.id));
  const catalogSites = new Set(((await knex.withSchema('catalog').table('site_views').where({ integrator_id: INTEGRATOR }).whereIn('site_id', siteIds).select('site_id')) as { site_id: string }[]).map((r) => r.site_id));
  const enrollmentSites = new Set(((await knex.withSchema('enrollment').table('sites').where({ integrator_id: INTEGRATOR }).whereIn('id', siteIds).select('id')) as { id: string }[]).map((r) => r.id));
  return [
    ...deviceIds.filter((d) => !catalogDevices.has(d)).map((d) => `catalog device ${d}`),
    ...deviceIds.filter((d) => !enrollmentDevices.has(d)).map((d) => `enrollment device ${d}`),
    ...siteIds.filter((s) => !catalogSites.has(s)).map((s) => `catalog site ${s}`),
    ...siteIds.filter((s) => !enrollmentSites.has(s)).map((s) => `enrollment site ${s}`),
  ];
}

const logger = createLogger({ name: 'test', level: 'silent' });

describe('the main command killed under commissioning load loses no event', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  const scenario = async (storage: { DATA_DIR: string } | { DATABASE_URL: string }, perRound: number, openAfter: () => Promise<{ knex: Knex; close(): Promise<void> }>) => {
    const [pub, util, portal] = [await freePort(), await freePort(), await freePort()];
    const env = {
      ...storage,
      LOG_LEVEL: 'warn',
      PORT: String(pub),
      UTILITY_PORT: String(util),
      PORTAL_PORT: String(portal),
      SANDBOX_CLIENT_TOKEN,
      SANDBOX_UTILITY_API_KEY,
      SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
      // The catalog answers from its read model at once: what a lost event leaves out shows.
      CATALOG_SITE_SETTLE_MS: '1',
      RATE_LIMIT_CLIENT: '1000000',
      RATE_LIMIT_SITE: '1000000',
    };
    const api = apiClient(`http://127.0.0.1:${pub}`, SANDBOX_CLIENT_TOKEN);
    let main = await MainCommand.start(env);
    cleanups.push(() => main.stop('SIGKILL'));
    const load = commissioningLoad(() => api);
    // Killed, stopped gracefully, killed again: each time while clients are commissioning.
    for (const [round, signal] of (['SIGKILL', 'SIGTERM', 'SIGKILL'] as const).entries()) {
      const target = (round + 1) * perRound;
      await waitFor(() => load.acknowledged.size >= target, { timeoutMs: 120_000, intervalMs: 20, what: `${target} acknowledged commissionings` });
      await main.stop(signal);
      main = await MainCommand.start(env);
    }
    const final = load.acknowledged.size + 10;
    await waitFor(() => load.acknowledged.size >= final, { timeoutMs: 60_000, intervalMs: 20, what: 'commissionings after the last restart' });
    await load.stop();

    const sites = [...load.acknowledged.values()];
    expect(sites.length).toBeGreaterThanOrEqual(3 * perRound + 10);
    let wrong: string[] = [];
    await waitFor(async () => (wrong = await mismatches(api, sites)).length === 0, { timeoutMs: 60_000, intervalMs: 1000, what: 'every read model complete' }).catch(() => undefined);
    expect(wrong, `${wrong.length} of ${sites.length} sites wrong, e.g.\n${wrong.slice(0, 5).join('\n')}`).toEqual([]);

    // A graceful stop delivers what was published for up to 15 s; what it could not deliver
    // stays in the owners' outboxes and is published at the next start. So the read models are
    // whole after the stop, or after a start that delivers the rest (a few at most).
    await main.stop('SIGTERM');
    for (let start = 0; ; start++) {
      const db = await openAfter();
      let missing: string[];
      try {
        missing = await missingFromReadModels(db.knex, sites);
      } finally {
        await db.close();
      }
      if (missing.length === 0 || start === 3) {
        expect(missing).toEqual([]);
        break;
      }
      main = await MainCommand.start(env);
      await new Promise((r) => setTimeout(r, 5_000));
      await main.stop('SIGTERM');
    }
  };

  it('on PGlite (the embedded default)', { timeout: 400_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'efs-crash-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await scenario({ DATA_DIR: dir }, 20, () => openDatabase({ dataDir: join(dir, 'pgdata'), logger }));
  });

  it.runIf(postgres)('on Postgres', { timeout: 400_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    await scenario({ DATABASE_URL: database.url }, 30, () => openDatabase({ url: database.url, dataDir: '', logger }));
  });
});

describe.runIf(postgres)('read models that missed events are repaired from the owners\' state', () => {
  let database: TestDatabase;
  afterAll(async () => {
    await database?.drop();
  });

  it('once at start after an upgrade, and on demand with efs read-models rebuild', { timeout: 180_000 }, async () => {
    database = await createTestDatabase();
    const env = { ...testSystemEnv(), DATABASE_URL: database.url, CATALOG_SITE_SETTLE_MS: '1' };
    let system = await startSystem(env);
    let api = apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN);
    const sites: Acknowledged[] = [];
    for (let i = 0; i < 20; i++) {
      const siteId = uid('repair');
      const devices = [battery(siteId, uid('bat'), { attributes: { battery_capacity_wh: 4000 + i * 500, battery_power_input_w: 3000, battery_power_output_w: 2500 + i * 100 } }), evCharger(siteId, uid('ev'))];
      const r = await api.post('/v1/commission', { site: { id: siteId, zip_code: '88801' }, devices, can_auto_enroll: false });
      expect(r.status).toBe(200);
      sites.push({ siteId, deviceIds: devices.map((d) => d.id), programs: summary(r.body.programs) });
    }
    await waitFor(async () => (await missingFromReadModels(system.db.knex, sites)).length === 0, { timeoutMs: 20_000, what: 'read models complete' });
    await system.stop();

    // What earlier versions left behind: read models that missed events (of some devices, of some sites).
    const db = await openDatabase({ url: database.url, dataDir: '', logger });
    const damage = async () => {
      await db.knex.withSchema('catalog').table('device_views').whereIn('device_id', sites.slice(0, 10).flatMap((s) => s.deviceIds)).delete();
      await db.knex.withSchema('enrollment').table('devices').whereIn('id', sites.slice(5, 15).flatMap((s) => s.deviceIds)).delete();
      await db.knex.withSchema('enrollment').table('sites').whereIn('id', sites.slice(15).map((s) => s.siteId)).delete();
      expect((await missingFromReadModels(db.knex, sites)).length).toBeGreaterThan(30);
    };
    try {
      // An upgraded deployment repairs once at start.
      await damage();
      await db.knex.withSchema('commissioning').table('processed_messages').where({ consumer: 'efs-read-model-repair' }).delete();
      system = await startSystem(env);
      api = apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN);
      await waitFor(async () => (await missingFromReadModels(db.knex, sites)).length === 0, { timeoutMs: 30_000, what: 'read models repaired at start' });
      expect(await mismatches(api, sites)).toEqual([]);
      await system.stop();

      // Later damage is repaired on demand (the start does not repeat the repair).
      await damage();
      system = await startSystem(env);
      api = apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN);
      expect((await missingFromReadModels(db.knex, sites)).length).toBeGreaterThan(30);
      const { stdout } = await promisify(execFile)(process.execPath, ['cli/src/main.ts', 'read-models', 'rebuild'], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' } });
      expect(stdout).toContain('commissioning: 60 events re-announced');
      expect(stdout).toMatch(/program-catalog: \d+ events re-announced/);
      await waitFor(async () => (await missingFromReadModels(db.knex, sites)).length === 0, { timeoutMs: 30_000, what: 'read models rebuilt on demand' });
      expect(await mismatches(api, sites)).toEqual([]);
    } finally {
      await system.stop().catch(() => undefined);
      await db.close();
    }
  });
});
