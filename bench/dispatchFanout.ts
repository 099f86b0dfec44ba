/**
 * Fan-out of a PROGRAM event in distributed mode: seeds ACTIVE battery devices through the API
 * (commissioning with auto-enrollment in the sandbox program, approved by the sandbox), then
 * dispatches one event to all of them and measures the time from POST /v1/events until its last
 * command is visible through GET /v1/commands, and the commands per second; next to a plain
 * multi-row insert and a COPY of the same rows into a scratch table of the same Postgres in the same run.
 *
 *   node bench/dispatchFanout.ts [--devices 100000] [--per-site 100] [--concurrency 8]
 *
 * Needs Kafka, the registry and Postgres (make infra-up). Prints numbers; asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { apiClient, waitFor } from '@efs/testing';
import { startDistributedSystem } from '../test/harness/distributed.ts';

const { values } = parseArgs({ options: { devices: { type: 'string', default: '100000' }, 'per-site': { type: 'string', default: '100' }, concurrency: { type: 'string', default: '8' } } });
const devices = Number(values.devices);
const perSite = Math.min(100, Number(values['per-site']));
const concurrency = Number(values.concurrency);
const sites = Math.ceil(devices / perSite);
const SANDBOX_FLEX = '5a0d0b7e-0000-4000-8000-000000000001';
const run = `f${Date.now().toString(36)}`;

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const log = (line: string) => console.log(line);

log(`command: node bench/dispatchFanout.ts --devices ${devices} --per-site ${perSite} --concurrency ${concurrency}`);
const sys = await startDistributedSystem({
  // info: event-dispatch logs where the fan-out's time went (printed below).
  LOG_LEVEL: 'info',
  RATE_LIMIT_CLIENT: '100000000',
  RATE_LIMIT_UTILITY: '100000000',
  SANDBOX_AUTO_APPROVE_DELAY_MS: '100',
  REQUEST_TIMEOUT_MS: '30000',
  COMMISSIONING_ENROLLMENT_TIMEOUT_MS: '20000',
});
const db = new pg.Client({ connectionString: sys.database.url });
await db.connect();
const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);

/**
 * Commissions a site with its devices auto-enrolled; when the auto-enrollment did not come in time
 * (the answer then has none) or the request got no answer, enrolls the devices as its user would.
 * A 503 (a service slow to answer, the shared broker restarting) is retried for up to ten minutes.
 */
async function seedSite(id: string, body: { devices: { id: string }[] }): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const r = await sys.api.post('/v1/commission', body);
    if (r.status === 200 && r.body.enrollment) return;
    const exists = r.status === 200 || (r.status === 409 && /exists already/.test(r.body.message));
    if (exists) {
      const user = apiClient(sys.urls.public, (await sys.api.post(`/v1/auth/site/${id}`)).body.site_access_token);
      const enrolled = await user.post(`/v1/site/${id}/enrollments`, { program_id: SANDBOX_FLEX, device_ids: body.devices.map((d) => d.id) });
      // 409: the late auto-enrollment holds the devices already.
      if (enrolled.status === 200 || enrolled.status === 409) return;
    }
    if ((!exists && r.status !== 503) || Date.now() > deadline) throw new Error(`seeding ${id} failed: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

try {
  // 1. Seed through the API: one commission request per site, its devices auto-enrolled.
  const seedStarted = performance.now();
  const siteId = (i: number) => `${run}-s${i}`;
  const deviceId = (s: number, d: number) => `${run}-s${s}-d${d}`;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < sites; i = next++) {
      const n = Math.min(perSite, devices - i * perSite);
      const body = {
        site: { id: siteId(i), first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way', zip_code: '88801' },
        devices: Array.from({ length: n }, (_, d) => ({
          id: deviceId(i, d), site_id: siteId(i), manufacturer_name: 'Acme', product_name: 'PW', serial_number: `SN-${i}-${d}`, type: 'BATTERY',
          attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z',
        })),
        can_auto_enroll: true,
      };
      await seedSite(siteId(i), body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const commissioned = performance.now();
  log(`seeded ${devices} devices at ${sites} sites through POST /v1/commission in ${seconds(commissioned - seedStarted)}`);
  // Sandbox approval, then dispatch's read model (efs.enrollment.enrollments, efs.commissioning.devices) catching up.
  await waitFor(async () => (await count(`select count(*) as n from dispatch.enrollment_devices where program_id = $1 and status = 'ACTIVE'`, [SANDBOX_FLEX])) >= devices, {
    timeoutMs: 900_000, intervalMs: 1000, what: 'dispatch to see every device ACTIVE',
  });
  await waitFor(async () => (await count(`select count(*) as n from dispatch.devices where id like $1`, [`${run}-%`])) >= devices, { timeoutMs: 900_000, intervalMs: 1000, what: 'dispatch to see every device' });
  log(`every device ACTIVE in dispatch's read model ${seconds(performance.now() - commissioned)} later`);

  // 2. The event: from the request to its last command visible through the API.
  const lastDevice = deviceId(sites - 1, devices - (sites - 1) * perSite - 1);
  const event = { program_id: SANDBOX_FLEX, target_type: 'PROGRAM', target_ids: [], actions: [{ starts_at: new Date(Date.now() + 3600_000).toISOString(), duration_s: 3600, mode: 'DISCHARGE', setpoint_w: devices * 3000 }] };
  const t0 = performance.now();
  const created = await sys.utility.post('/v1/events', event);
  const answered = performance.now();
  if (created.status !== 200) throw new Error(`POST /v1/events answered ${created.status} ${JSON.stringify(created.body)}`);
  const eventId = created.body.id as string;
  await waitFor(async () => {
    const r = await sys.api.get(`/v1/commands?device_id=${encodeURIComponent(lastDevice)}&limit=10`);
    return r.body.some((c: { event_id: string }) => c.event_id === eventId);
  }, { timeoutMs: 600_000, intervalMs: 50, what: 'the last command' });
  const lastVisible = performance.now();
  // The fan-out commits in one transaction, so the last command's arrival is every command's; checked, not assumed.
  await waitFor(async () => (await count(`select count(*) as n from dispatch.commands where event_id = $1`, [eventId])) === devices, { timeoutMs: 600_000, intervalMs: 50, what: 'every command' });
  const allVisible = performance.now();
  const fanOut = allVisible - t0;
  log(`POST /v1/events answered in ${(answered - t0).toFixed(0)} ms`);
  log(`event over ${devices} ACTIVE devices: last command visible through GET /v1/commands ${seconds(lastVisible - t0)} after the request, all ${devices} ${seconds(fanOut)} after; ${(devices / (fanOut / 1000)).toFixed(0)} commands/s`);
  // Announced: the event's announcements written to the outbox (their own transaction, after the
  // commands became readable), then the outbox drained to the broker.
  await waitFor(async () => (await count(`select count(*) as n from dispatch.events where id = $1 and commands_announced_at is not null`, [eventId])) === 1, { timeoutMs: 900_000, intervalMs: 50, what: 'the announcements written' });
  log(`command.created of every command written to the outbox ${seconds(performance.now() - t0)} after the request`);
  await waitFor(async () => (await count(`select count(*) as n from dispatch.outbox`)) === 0, { timeoutMs: 900_000, intervalMs: 250, what: 'the announcements published' });
  log(`command.created of every command published to efs.dispatch.commands ${seconds(performance.now() - t0)} after the request`);

  for (const line of sys.logs('event-dispatch').split('\n').filter((l) => /commands (created|announced)/.test(l) && l.includes(eventId))) log(`event-dispatch: ${line}`);

  // Read back through the API, page by page, as a polling device cloud would (not timed above).
  const readStarted = performance.now();
  let seen = 0;
  for (let skip = 0; ; skip += 1000) {
    const page = (await sys.api.get(`/v1/commands?limit=1000&skip=${skip}`)).body as { event_id: string }[];
    seen += page.filter((c) => c.event_id === eventId).length;
    if (page.length < 1000) break;
  }
  log(`GET /v1/commands read back ${seen} commands of the event in ${Math.ceil(seen / 1000)} pages in ${seconds(performance.now() - readStarted)}`);

  // 3. Reference: the same rows into a table of the same shape and indexes, as a plain multi-row
  // insert (bound parameters, as many rows a statement as Postgres's 65,535 parameters allow) and
  // with COPY (what the fan-out uses), each in one transaction. Postgres's own CPU for each is read
  // from /proc when the database runs on this machine (the benches' Postgres does).
  const rows = (await db.query('select * from dispatch.commands where event_id = $1', [eventId])).rows as Record<string, unknown>[];
  const columns = Object.keys(rows[0]!);
  const backendPid = Number((await db.query('select pg_backend_pid() as n')).rows[0].n);
  const backendCpuMs = (): number | undefined => {
    try {
      const fields = readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return undefined;
    }
  };
  const reference = async (what: string, write: () => Promise<void>): Promise<number> => {
    await db.query('create schema if not exists bench_ref');
    await db.query('drop table if exists bench_ref.commands');
    await db.query('create table bench_ref.commands (like dispatch.commands including defaults including constraints including indexes)');
    const cpu0 = backendCpuMs();
    const started = performance.now();
    await db.query('begin');
    await write();
    await db.query('commit');
    const ms = performance.now() - started;
    const cpu1 = backendCpuMs();
    const cpu = cpu0 === undefined || cpu1 === undefined ? '' : `, Postgres CPU ${seconds(cpu1 - cpu0)}`;
    log(`reference: ${what} of the same ${rows.length} rows (same indexes) ${seconds(ms)}; ${(rows.length / (ms / 1000)).toFixed(0)} rows/s${cpu}`);
    return ms;
  };
  const chunk = Math.floor(60_000 / columns.length);
  const plain = await reference(`plain multi-row insert (${chunk} rows a statement)`, async () => {
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      const params: unknown[] = [];
      const tuples = part.map((r) => `(${columns.map((c) => (params.push(r[c]), `$${params.length}`)).join(', ')})`);
      await db.query(`insert into bench_ref.commands (${columns.join(', ')}) values ${tuples.join(', ')}`, params);
    }
  });
  const copied = await reference('COPY', async () => {
    const text = (v: unknown) => (v === null ? '\\N' : v instanceof Date ? v.toISOString() : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v).replace(/[\\\t\n\r]/g, (ch) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[ch]!));
    const lines = rows.map((r) => `${columns.map((c) => text(r[c])).join('\t')}\n`);
    await pipeline(Readable.from(lines, { objectMode: false }), db.query(copyFrom(`copy bench_ref.commands (${columns.join(', ')}) from stdin`)));
  });
  log(`fan-out / plain insert: ×${(fanOut / plain).toFixed(1)}; fan-out / COPY: ×${(fanOut / copied).toFixed(1)}`);
  await db.query('drop schema bench_ref cascade');
} finally {
  await db.end();
  await sys.stop();
}
