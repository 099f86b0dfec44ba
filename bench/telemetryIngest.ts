/**
 * Telemetry at fleet scale, in distributed mode (every service its own process on Kafka and
 * Postgres) or, with --mode embedded, in the main command's default mode (`efs run`: one process,
 * in-process transport, PGlite): several device clouds, each its own process, send 1,000-item
 * BATTERY batches to the gateway. Prints the sustained rate of readings answered OK, the lag from the HTTP 200 to the row
 * being queryable (p50, p99, max, sampled readings), CPU per 1,000 readings of each process, and,
 * in the same run, a raw COPY of as many rows of the same shape into the same table as the
 * physical reference. With --kill-broker-at / --kill-ingest-at it kills the broker (SIGKILL, then
 * starts it again at once) or telemetry-ingest (SIGKILL, then a new process) mid-run, reports
 * what the gateway answered meanwhile, and checks that every reading answered OK is stored
 * exactly once.
 *
 *   node bench/telemetryIngest.ts [--mode distributed|embedded] [--clouds 4] [--devices 1000] [--duration 60]
 *        [--inflight 2] [--partitions 12] [--kill-broker-at SECONDS] [--kill-ingest-at SECONDS] [--profile]
 *
 * Embedded: a 200 means stored (the in-process transport acknowledges once telemetry-ingest has
 * written the batch), so there is no lag to sample; the rows are counted and the raw COPY made in
 * the PGlite data folder once the process has stopped (PGlite belongs to one process at a time).
 * The failure options are for distributed mode. --profile writes CPU profiles (`node --cpu-prof`):
 * embedded, of `efs run`; distributed, of every service (NODE_OPTIONS), and summarises the
 * gateway's and telemetry-ingest's over the load's window (bench/profileSummary.ts).
 *
 * Needs Kafka, the registry and Postgres (make infra-up). Prints numbers; asserts nothing but
 * exits 1 when a reading answered OK is missing or stored twice. The broker is shared: kill it only
 * when that is what you measure.
 */
import { execFile } from 'node:child_process';
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { copyLines, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { apiClient, SANDBOX_CLIENT_TOKEN, waitFor, type ApiClient } from '@efs/testing';
import { BACKEND_SERVICES, startDistributedSystem, type DistributedSystem } from '../test/harness/distributed.ts';
import { commSource, cpuSince, pidCpuMs } from './procCpu.ts';
import { summarize, type CpuProfile } from './profileSummary.ts';
import { CLIENT_TOKEN, Cleanup, startEmbedded, type MeasuredSystem } from './systems.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'distributed' },
    clouds: { type: 'string', default: '4' },
    devices: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '60' },
    inflight: { type: 'string', default: '2' },
    partitions: { type: 'string', default: '12' },
    'kill-broker-at': { type: 'string' },
    'kill-ingest-at': { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});
const EMBEDDED = values.mode === 'embedded';
if (!EMBEDDED && values.mode !== 'distributed') throw new Error('--mode is distributed or embedded');
if (EMBEDDED && (values['kill-broker-at'] || values['kill-ingest-at'])) throw new Error('the failure options need --mode distributed');
const CLOUDS = Number(values.clouds);
const DEVICES = Number(values.devices);
const DURATION_S = Number(values.duration);
const INFLIGHT = Number(values.inflight);
const BATCH = 1000;
const INTEGRATOR = 'sandbox-integrator';
const root = join(import.meta.dirname, '..');
const kafkaSh = join(root, 'deploy', 'local', 'kafka.sh');

/** CPU seconds of a process (its threads included), from /proc; 0 once it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  return pidCpuMs(pid) / 1000;
}

const kafkaPid = async () => Number((await run('bash', [kafkaSh, 'pid']).catch(() => ({ stdout: '' }))).stdout.trim()) || undefined;

/** CPU of a process across restarts: what the dead ones used is kept when they are replaced. */
class CpuMeter {
  private before = 0;
  private dead = 0;
  private readonly pidOf: () => number | undefined | Promise<number | undefined>;
  constructor(pidOf: () => number | undefined | Promise<number | undefined>) {
    this.pidOf = pidOf;
  }
  private pid: number | undefined;
  async start() {
    this.pid = await this.pidOf();
    this.before = cpuSeconds(this.pid);
  }
  /** Call just before this run kills the process. */
  async retire() {
    this.dead += cpuSeconds(await this.pidOf()) - this.before;
    this.before = 0;
    this.pid = undefined;
  }
  /** NaN when the process was replaced by someone else meanwhile (the shared broker): its CPU is unknown. */
  async used() {
    const pid = await this.pidOf();
    if (this.pid !== undefined && pid !== this.pid) return NaN;
    return this.dead + cpuSeconds(pid) - this.before;
  }
}

/**
 * CPU of the Postgres backends serving this run's database (the services' connections, not the
 * bench's lag poller), read by pid from /proc: unlike the figure of every Postgres process, other
 * users of the shared server do not count in it, nor does the server's background work (WAL
 * writer, checkpointer). Only backends open when the load starts are counted (pools keep theirs;
 * the bench's own connections opened afterwards to count the rows are not).
 */
class BackendCpu {
  private readonly start = new Map<number, number>();
  private readonly client: pg.Client;
  constructor(client: pg.Client) {
    this.client = client;
  }
  private async pids(): Promise<number[]> {
    const r = await this.client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return r.rows.map((x: { pid: number }) => x.pid);
  }
  async begin(): Promise<void> {
    for (const pid of await this.pids()) this.start.set(pid, pidCpuMs(pid));
  }
  /** Seconds used since begin() by the backends open then (one that has exited since: what it had used by then). */
  used(): number {
    let ms = 0;
    for (const [pid, before] of this.start) ms += Math.max(0, pidCpuMs(pid) - before);
    return ms / 1000;
  }
  /** Transactions committed in this database so far (the services' and the poller's). */
  async commits(): Promise<number> {
    return Number((await this.client.query('select xact_commit from pg_stat_database where datname = current_database()')).rows[0].xact_commit);
  }
}

const q = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
const log = (...a: unknown[]) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

const started = Date.now();
const load0 = loadavg();
const runDir = join(root, '.run', 'bench', `telemetry-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(runDir, { recursive: true });
const profileDir = values.profile ? join(runDir, 'profiles') : undefined;
/** CLOCK_MONOTONIC µs, the clock of a CPU profile's sample times. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const cleanup = new Cleanup();
process.once('SIGINT', () => void cleanup.runAll().finally(() => process.exit(130)));

/** The system under load, whichever the mode: where to send, what to meter, how to read what is stored. */
interface Target {
  api: ApiClient;
  url: string;
  token: string;
  meters: Record<string, CpuMeter>;
  /** Postgres the bench reads during the run (distributed): lag is sampled there. */
  live: pg.Client | undefined;
  /** The database holding telemetry.readings once the load is over (embedded: after the process stopped). */
  settled(): Promise<Database>;
  stop(): Promise<void>;
}

const logger = createLogger({ name: 'bench', level: 'warn' });

async function distributedTarget(): Promise<Target & { sys: DistributedSystem }> {
  const prof: Record<string, string> = profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {};
  const sys = await startDistributedSystem({ LOG_LEVEL: 'warn', RATE_LIMIT_CLIENT: '100000000', TELEMETRY_PARTITIONS: values.partitions!, REQUEST_TIMEOUT_MS: '5000', ...prof });
  const live = new pg.Client({ connectionString: sys.database.url });
  await live.connect();
  let db: Database | undefined;
  return {
    sys,
    api: sys.api,
    url: sys.urls.public,
    token: SANDBOX_CLIENT_TOKEN,
    meters: {
      gateway: new CpuMeter(() => sys.pid('gateway')),
      'telemetry-ingest': new CpuMeter(() => sys.pid('telemetry-ingest')),
      'kafka broker (JVM)': new CpuMeter(kafkaPid),
      // webhooks consumes the readings topic too (telemetry.published); the rest are idle under this load but run on the same cores.
      ...Object.fromEntries(BACKEND_SERVICES.filter((n) => n !== 'telemetry-ingest').map((n) => [n, new CpuMeter(() => sys.pid(n))])),
    },
    live,
    settled: async () => (db ??= await openDatabase({ url: sys.database.url, dataDir: '', logger, poolMax: 2 })),
    stop: async () => {
      await live.end().catch(() => undefined);
      await db?.close();
      await sys.stop();
    },
  };
}

async function embeddedTarget(): Promise<Target> {
  const sys: MeasuredSystem = await startEmbedded(cleanup, runDir, profileDir);
  const pid = sys.pid!;
  let db: Database | undefined;
  return {
    api: apiClient(sys.url, CLIENT_TOKEN),
    url: sys.url,
    token: CLIENT_TOKEN,
    meters: { 'efs run (every service, PGlite)': new CpuMeter(() => (processAlive(pid) ? pid : undefined)) },
    live: undefined,
    settled: async () => {
      if (db) return db;
      // PGlite belongs to one process: stop the system (gracefully), then open its data folder here.
      process.kill(pid, 'SIGTERM');
      await waitFor(() => !processAlive(pid), { timeoutMs: 120_000, intervalMs: 200, what: 'the embedded system to stop' });
      return (db = await openDatabase({ dataDir: join(runDir, 'embedded-data', 'pgdata'), logger }));
    },
    stop: async () => {
      await db?.close();
      await sys.stop();
    },
  };
}

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const target: Target = EMBEDDED ? await embeddedTarget() : await distributedTarget();
const sys = EMBEDDED ? undefined : (target as Target & { sys: DistributedSystem }).sys;
let failed: boolean;
/** Distributed --profile: the processes whose profiles are summarised, by pid, and the load's window. */
const profiled = new Map<number, string>();
for (const name of ['gateway', 'telemetry-ingest']) {
  const pid = sys?.pid(name);
  if (pid && profileDir) profiled.set(pid, name);
}
let loadWindow: { from: number; to: number } | undefined;

/** Once the services have stopped (and written their profiles): each profiled one named and summarised over the load. */
function summariseProfiles(): void {
  if (!profileDir || EMBEDDED || !loadWindow) return;
  for (const file of readdirSync(profileDir)) {
    const name = profiled.get(Number(file.split('.')[3]));
    if (!name) continue;
    const named = join(profileDir, `${name}.cpuprofile`);
    renameSync(join(profileDir, file), named);
    const text = summarize(JSON.parse(readFileSync(named, 'utf8')) as CpuProfile, { ...loadWindow, top: 30 });
    writeFileSync(join(profileDir, `${name}.txt`), text);
    log(`CPU profile of ${name} over the load: ${join(profileDir, `${name}.txt`)}`);
  }
}

try {
  // Devices: 100 a site (the commissioning limit), each cloud its own.
  const devicesOf: string[][] = [];
  for (let c = 0; c < CLOUDS; c++) {
    const ids = Array.from({ length: DEVICES }, (_, i) => `c${c}-d${i}`);
    devicesOf.push(ids);
    for (let s = 0; s < DEVICES / 100; s++) {
      const siteId = `c${c}-s${s}`;
      const devices = ids.slice(s * 100, s * 100 + 100).map((id) => ({ id, site_id: siteId, manufacturer_name: 'Acme', product_name: 'PW', serial_number: `SN-${id}`, type: 'BATTERY', attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z' }));
      // A busy machine can answer 503 (and have commissioned anyway: then the retry answers 409).
      await waitFor(async () => {
        const r = await target.api.post('/v1/commission', { site: { id: siteId, zip_code: '88801' }, devices, can_auto_enroll: false });
        if (r.status !== 200 && r.status !== 409 && r.status !== 503) throw new Error(`commission: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        return r.status !== 503;
      }, { timeoutMs: 120_000, intervalMs: 500, what: `site ${siteId} commissioned` });
    }
  }
  log(`commissioned ${CLOUDS * DEVICES} devices`);
  // The gateway learns devices from the devices topic: wait until every one is known (a probe a
  // year back per cloud; those readings count as OK readings like any other).
  let okReadings = 0;
  const probeStart = Date.now() - 300 * 86_400_000;
  for (const ids of devicesOf) {
    const body = { telemetry: ids.slice(0, BATCH).map((d) => ({ device_id: d, start_time: new Date(probeStart).toISOString(), duration_s: 300 })) };
    await waitFor(async () => {
      const r = await target.api.post('/v1/telemetry/BATTERY', body);
      return r.status === 200 && r.body.results.every((x: { status: string }) => x.status === 'OK');
    }, { timeoutMs: 120_000, intervalMs: 500, what: 'every device known to the gateway' });
    okReadings += Math.min(BATCH, ids.length);
  }

  const meters = target.meters;
  for (const m of Object.values(meters)) await m.start();
  const postgres = commSource('postgres', 'postgres');
  const pg0 = postgres.read();
  const backends = target.live ? new BackendCpu(target.live) : undefined;
  await backends?.begin();
  const commits0 = (await backends?.commits()) ?? 0;

  // Lag: sampled readings of every OK batch, looked up by primary key until they are there.
  const pending: { device: string; start: number; okAt: number }[] = [];
  const lags: number[] = [];
  let lastOk = Date.now();
  let polling = true;
  const live = target.live;
  const poller = (async () => {
    if (!live) return; // embedded: an OK batch is already stored
    while (polling || pending.length > 0) {
      const look = pending.slice(0, 5000);
      if (look.length > 0) {
        const found = await live.query(
          `select s.i from unnest($2::text[], $3::timestamptz[], $4::int[]) as s(device_id, start_time, i)
           where exists (select 1 from telemetry.readings r where r.integrator_id = $1 and r.device_id = s.device_id and r.start_time = s.start_time)`,
          [INTEGRATOR, look.map((x) => x.device), look.map((x) => new Date(x.start).toISOString()), look.map((_, i) => i)],
        );
        const now = Date.now();
        const hit = new Set(found.rows.map((r: { i: number }) => r.i));
        for (const i of [...hit].sort((a, b) => b - a)) lags.push(now - pending.splice(i, 1)[0]!.okAt);
      }
      await new Promise((r) => setTimeout(r, 50));
      if (!polling && Date.now() - lastOk > 300_000) break;
    }
  })();

  // The clouds.
  const answers: { status: number; ms: number; at: number }[] = [];
  let failedItems = 0;
  const children: ChildProcess[] = [];
  const done: Promise<void>[] = [];
  const cloudCpu: number[] = [];
  const loadStart = Date.now();
  const loadStartUs = monotonicUs();
  for (let c = 0; c < CLOUDS; c++) {
    const cfg = { url: target.url, token: target.token, cloud: c, devices: devicesOf[c], batch: BATCH, durationMs: DURATION_S * 1000, inflight: INFLIGHT, baseStart: Date.now() - 2 * 86_400_000, samplesPerBatch: 4 };
    const child = fork(join(import.meta.dirname, 'telemetryCloud.ts'), [JSON.stringify(cfg)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    done.push(
      new Promise<void>((resolve) => {
        child.on('message', (m: any) => {
          if (m.type === 'answer') answers.push(m);
          if (m.type === 'ok') {
            okReadings += m.readings;
            failedItems += m.failedItems;
            lastOk = m.okAt;
            if (live) for (const [device, start] of m.samples) pending.push({ device, start, okAt: m.okAt });
          }
          if (m.type === 'done') {
            cloudCpu[c] = cpuSeconds(child.pid);
            resolve();
          }
        });
        child.on('exit', () => resolve());
      }),
    );
  }

  // Failures on schedule.
  let outage: { from: number; to: number } | undefined;
  const events: Promise<void>[] = [];
  const eventErrors: string[] = [];
  const schedule = (task: () => Promise<void>) => events.push(task().catch((err: Error) => void eventErrors.push(err.message)));
  if (values['kill-broker-at'] !== undefined) {
    schedule(
      (async () => {
        await new Promise((r) => setTimeout(r, Number(values['kill-broker-at']) * 1000));
        await meters['kafka broker (JVM)']!.retire();
        const pid = await kafkaPid();
        log(`killing the broker (pid ${pid}) and starting it again at once`);
        const from = Date.now();
        process.kill(pid!, 'SIGKILL');
        // Start it again at once; the dying JVM may hold the port for a moment, so retry until it runs.
        for (let attempt = 1; ; attempt++) {
          try {
            await run('bash', [kafkaSh, 'start']);
            break;
          } catch (err) {
            if (attempt >= 120) throw err;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
        outage = { from, to: Date.now() };
        log(`broker back after ${((outage.to - from) / 1000).toFixed(1)} s`);
      }),
    );
  }
  if (values['kill-ingest-at'] !== undefined) {
    schedule(
      (async () => {
        await new Promise((r) => setTimeout(r, Number(values['kill-ingest-at']) * 1000));
        await meters['telemetry-ingest']!.retire();
        log('killing telemetry-ingest (SIGKILL) and starting a new process');
        await sys!.kill('telemetry-ingest', 'SIGKILL');
        await sys!.restart('telemetry-ingest');
        log('telemetry-ingest ready again');
      }),
    );
  }

  await Promise.all(done);
  const loadEnd = Date.now();
  loadWindow = { from: loadStartUs, to: monotonicUs() };
  await Promise.all(events);
  for (const e of eventErrors) log(`a scheduled failure went wrong: ${e}`);
  log(`clouds done: ${okReadings} readings answered OK; waiting until all are stored`);
  // CPU first: embedded, reading the rows stops the process.
  const cpu: Record<string, number> = {};
  const cpuAtEnd = async () => {
    for (const [name, m] of Object.entries(meters)) cpu[name] = await m.used();
  };
  if (EMBEDDED) await cpuAtEnd();
  const db = await target.settled();
  if (EMBEDDED && values.profile) log(`CPU profile of efs run: ${join(runDir, 'profiles', 'embedded.cpuprofile')} (node bench/profileSummary.ts FILE)`);
  const stored = async () => Number((await db.knex.raw('select count(*) as n from telemetry.readings where integrator_id = ?', [INTEGRATOR])).rows[0].n);
  let allStoredAt = 0;
  try {
    await waitFor(async () => (await stored()) >= okReadings, { timeoutMs: 300_000, intervalMs: 200, what: 'every OK reading stored' });
    // Embedded, a reading was stored when it was answered OK (counted here, after the process stopped).
    allStoredAt = EMBEDDED ? loadEnd : Date.now();
  } catch (err) {
    log((err as Error).message);
  }
  polling = false;
  await poller;

  if (!EMBEDDED) await cpuAtEnd();
  cpu['device clouds (load generators, all)'] = cloudCpu.reduce((a, x) => a + (x ?? 0), 0);
  if (!EMBEDDED) cpu['postgres (every server process: shared with other users)'] = cpuSince(pg0, postgres.read()) / 1000;
  if (backends) cpu["postgres backends of this run's database (its services)"] = backends.used();
  const commits = backends ? (await backends.commits()) - commits0 : 0;

  // Exactly once: every reading sent is distinct by construction; the rows must number exactly
  // the readings answered OK (no loss, no duplicate).
  const check = (await db.knex.raw('select count(*) as n, count(distinct (device_id, start_time)) as d from telemetry.readings where integrator_id = ?', [INTEGRATOR])).rows[0];
  const [rows, distinct] = [Number(check.n), Number(check.d)];
  const exactlyOnce = rows === okReadings && distinct === rows;
  failed = !exactlyOnce;

  // The physical reference: COPY as many rows of the same shape into the same table.
  const refRows = Math.min(okReadings, 500_000);
  const refStart = Date.now() - 2 * 86_400_000;
  let text = '';
  const cols = 'integrator_id, device_id, start_time, duration_s, source, site_id, received_at, last_is_online, last_mode, battery_last_power_charge_w, battery_last_power_discharge_w, battery_total_energy_charge_wh, battery_total_energy_discharge_wh, battery_last_state_of_charge_percentage, battery_last_stored_energy_wh, battery_last_capacity_energy_wh, home_last_power_w, solar_last_power_w';
  for (let n = 0; n < refRows; n++) {
    const start = new Date(refStart + Math.floor(n / DEVICES) * 300_000).toISOString();
    text += `bench-copy-reference\tc0-d${n % DEVICES}\t${start}\t300\tINTERVAL\tc0-s0\t${Date.now()}\tt\tSELF_CONSUMPTION\t0\t${1800 + (n % 700)}\t0\t${150 + (n % 60)}\t${40 + (n % 50)}\t5400\t13500\t2500\t700\n`;
  }
  const copyT0 = performance.now();
  let copyBackendS = NaN;
  await db.knex.transaction(async (trx) => {
    if (db.kind === 'pglite') {
      await copyLines(trx, db.kind, 'telemetry.readings', cols.split(', '), [text]);
      return;
    }
    const backendPid = Number((await trx.raw('select pg_backend_pid() as pid')).rows[0].pid);
    const cpu0 = pidCpuMs(backendPid);
    await copyLines(trx, db.kind, 'telemetry.readings', cols.split(', '), [text]);
    copyBackendS = (pidCpuMs(backendPid) - cpu0) / 1000;
  });
  const copyS = (performance.now() - copyT0) / 1000;

  // Report.
  const loadS = (loadEnd - loadStart) / 1000;
  const sentDuringLoad = okReadings - CLOUDS * Math.min(BATCH, DEVICES);
  lags.sort((a, b) => a - b);
  const byStatus = new Map<number, number>();
  for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  const during = outage ? answers.filter((a) => a.at >= outage!.from && a.at - a.ms <= outage!.to) : [];
  const per1000 = (s: number) => ((s / sentDuringLoad) * 1000 * 1000).toFixed(1);
  console.log('');
  console.log(`command: node bench/telemetryIngest.ts --mode ${values.mode} --clouds ${CLOUDS} --devices ${DEVICES} --duration ${DURATION_S} --inflight ${INFLIGHT} --partitions ${values.partitions}${values['kill-broker-at'] ? ` --kill-broker-at ${values['kill-broker-at']}` : ''}${values['kill-ingest-at'] ? ` --kill-ingest-at ${values['kill-ingest-at']}` : ''}`);
  console.log(`machine: ${cpus().length} cores, load average ${load0.map((x) => x.toFixed(1)).join(' ')} at start and ${loadavg().map((x) => x.toFixed(1)).join(' ')} at end (shared with other engineers' work: numbers are from a busy machine)`);
  console.log(EMBEDDED
    ? 'embedded mode (efs run): every service in one process, in-process transport, PGlite; an answer OK means stored'
    : `distributed mode: gateway, telemetry-ingest and the other services each their own process; Kafka (1 broker), ${values.partitions} readings partitions`);
  console.log(`load: ${CLOUDS} device clouds (own processes) x ${INFLIGHT} batches in flight, ${BATCH} readings a batch, ${DEVICES} devices each, ${loadS.toFixed(1)} s (bodies written as JSON text directly and encoded once: the bytes JSON.stringify gave, at about a third of its CPU)`);
  const answerMs = answers.map((a) => a.ms).sort((a, b) => a - b);
  console.log(`answers: ${[...byStatus].map(([s, n]) => `${s === -1 ? 'network error' : s} x${n}`).join(', ')}; items FAILED: ${failedItems}; request latency p50 ${q(answerMs, 0.5)} ms, p99 ${q(answerMs, 0.99)} ms`);
  console.log(`sustained: ${(sentDuringLoad / loadS).toFixed(0)} readings/s answered OK; all stored ${allStoredAt ? `${((allStoredAt - loadEnd) / 1000).toFixed(1)} s after the last OK (${(sentDuringLoad / ((allStoredAt - loadStart) / 1000)).toFixed(0)} readings/s end to end)` : 'NOT within 300 s'}`);
  if (live) console.log(`lag HTTP 200 -> row queryable (${lags.length} sampled readings): p50 ${q(lags, 0.5)} ms  p99 ${q(lags, 0.99)} ms  max ${lags.at(-1)} ms`);
  console.log(`raw COPY reference, same table${EMBEDDED ? ' (PGlite, COPY FROM /dev/blob)' : ''}, ${refRows} rows: ${(refRows / copyS).toFixed(0)} rows/s (ingest end to end = ${((sentDuringLoad / ((allStoredAt || Date.now()) - loadStart)) * 1000 / (refRows / copyS) * 100).toFixed(0)} % of it)`);
  if (!Number.isNaN(copyBackendS)) console.log(`raw COPY reference's Postgres backend: ${((copyBackendS / refRows) * 1e6).toFixed(1)} ms per 1,000 rows (one transaction, ${refRows} rows)`);
  if (backends) console.log(`transactions committed in this run's database during the load: ${commits} (${(sentDuringLoad / Math.max(1, commits)).toFixed(0)} readings per transaction; the lag poller's and other services' count too)`);
  console.log('CPU seconds per 1,000 readings (x1000 = ms):');
  for (const [name, s] of Object.entries(cpu)) console.log(`  ${name.padEnd(58)} ${Number.isNaN(s) ? 'n/a (restarted by someone else during the run)' : `${per1000(s)} ms  (${s.toFixed(1)} s in all)`}`);
  if (outage) {
    const slowest = Math.max(0, ...during.map((a) => a.ms));
    const statuses = [...new Set(during.map((a) => a.status))];
    console.log(`broker killed for ${((outage.to - outage.from) / 1000).toFixed(1)} s: ${during.length} answers meanwhile, statuses ${statuses.join(', ')}, slowest ${slowest} ms (503 within REQUEST_TIMEOUT_MS 5000, not a hang)`);
  }
  console.log(`exactly once: ${okReadings} readings answered OK, ${rows} rows stored, ${distinct} distinct (device, start_time): ${exactlyOnce ? 'every OK reading stored exactly once' : 'MISMATCH'}`);
  console.log(`run took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const c of children) c.kill();
} finally {
  await target.stop().catch((err: Error) => log(`stopping: ${err.message}`));
  await cleanup.runAll();
  summariseProfiles();
}
process.exit(failed ? 1 : 0);
