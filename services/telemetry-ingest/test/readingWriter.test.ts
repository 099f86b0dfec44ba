import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelemetryOperations } from '@efs/api';
import type { ReadingMessage } from '@efs/contracts';
import { migrateSchema, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { call, InProcessTransport } from '@efs/messaging';
import { createTestDatabase, tierAvailable, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { parseTelemetryConfig } from '../src/config.ts';
import { TELEMETRY_SCHEMA } from '../src/context.ts';
import { createTelemetryService, type TelemetryService } from '../src/service.ts';

const run = await tierAvailable('postgres');
const logger = createLogger({ name: 'test', level: 'silent' });
const T0 = Date.UTC(2026, 10, 20, 8);
const min = (m: number) => T0 + m * 60_000;
const SYSTEM = { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null } as const;

const base = (device: string, kind: ReadingMessage['kind'], at: number, received: number): ReadingMessage => ({
  integrator_id: 'acme', site_id: 'home', device_id: device, kind, start_time: new Date(at).toISOString(), received_at: new Date(received).toISOString(), duration_s: null, last_is_online: null, last_mode: null,
  battery_last_power_charge_w: null, battery_last_power_discharge_w: null, battery_total_energy_charge_wh: null, battery_total_energy_discharge_wh: null,
  battery_last_stored_energy_wh: null, battery_last_capacity_energy_wh: null, battery_last_state_of_charge_percentage: null, battery_last_state_of_health_percentage: null,
  battery_last_backup_reserve_percentage: null, last_is_grid_online: null, home_total_energy_wh: null, home_last_power_w: null, solar_total_energy_wh: null,
  solar_last_power_w: null, oem_raw_data: null, battery_lifetime_energy_charge_wh: null, battery_lifetime_energy_discharge_wh: null,
});
const counter = (device: string, m: number, lifetime: number, received = 1): ReadingMessage => ({ ...base(device, 'COUNTER', min(m), received), battery_lifetime_energy_charge_wh: lifetime, battery_lifetime_energy_discharge_wh: 2 * lifetime });
const interval = (device: string, m: number, o: Partial<ReadingMessage> = {}, received = 1): ReadingMessage => ({ ...base(device, 'INTERVAL', min(m), received), duration_s: 300, ...o });

/** A database to write in, and how to get rid of it. */
type Opened = { db: Database; drop(): Promise<void> };

const onPostgres = async (): Promise<Opened> => {
  const database: TestDatabase = await createTestDatabase('efs_tm');
  const db = await openDatabase({ url: database.url, dataDir: '.data/unused', logger, poolMax: 8 });
  return { db, drop: () => database.drop() };
};

const onPglite = async (): Promise<Opened> => {
  const dir = await mkdtemp(join(tmpdir(), 'efs-telemetry-'));
  const db = await openDatabase({ dataDir: join(dir, 'pgdata'), logger });
  return { db, drop: () => rm(dir, { recursive: true, force: true }) };
};

/**
 * The store under concurrency and redelivery: on real Postgres (COPY through pg-copy-streams) and
 * on PGlite (COPY from a blob, the embedded mode), both paths of the merge (fresh readings copied
 * straight into the table, readings already stored merged).
 */
describe.runIf(run)('telemetry-ingest writes on Postgres', () => writes(onPostgres, { concurrent: true }));
describe('telemetry-ingest writes on PGlite', () => writes(onPglite, { concurrent: false }));

function writes(open: () => Promise<Opened>, opts: { concurrent: boolean }) {
  let opened: Opened;
  let db: Database;
  let transport: InProcessTransport;
  let service: TelemetryService;

  beforeAll(async () => {
    opened = await open();
    db = opened.db;
    await migrateSchema(db.knex, TELEMETRY_SCHEMA, migrations);
    transport = new InProcessTransport({ logger });
    service = await createTelemetryService({ logger, transport, db, config: parseTelemetryConfig({}) });
    await service.start();
  });
  afterAll(async () => {
    await service?.stop();
    await transport?.stop();
    await db?.close();
    await opened?.drop();
  });

  const rows = async (device: string) =>
    (await db.knex.raw(`select start_time, duration_s, source, battery_total_energy_charge_wh as charge, last_mode, oem_raw_data from telemetry.readings where device_id = ? order by start_time`, [device])).rows as any[];

  // PGlite has one connection, so batches never run concurrently there: Postgres only (not a skip).
  if (opts.concurrent) it('derives the same intervals whatever the interleaving of concurrent batches of one device’s counters', async () => {
    for (let round = 0; round < 4; round++) {
      const device = `conc-${round}`;
      const all = Array.from({ length: 40 }, (_, i) => counter(device, i * 5, i * 10));
      // Two batches interleaved in time, written at the same moment (a rebalance hands a partition over mid-batch).
      const [a, b] = [all.filter((_, i) => (i + round) % 2 === 0), all.filter((_, i) => (i + round) % 2 === 1)];
      await Promise.all([service.context.writer.write(a), service.context.writer.write(b), service.context.writer.write(all.slice(10, 20))]);
      const got = await rows(device);
      expect(got.map((r) => [new Date(r.start_time).getTime(), r.duration_s, r.charge])).toEqual(all.slice(0, -1).map((_, i) => [min(i * 5), 300, 10]));
    }
  });

  it('writes a redelivered batch to the same rows, and never puts an older acceptance over a newer one', async () => {
    const batch = [interval('redeliver', 0, { last_mode: 'first' }, 10), interval('redeliver', 5, {}, 10), counter('redeliver-c', 0, 0), counter('redeliver-c', 5, 3)];
    await service.context.writer.write(batch);
    await service.context.writer.write(batch);
    expect(await rows('redeliver')).toHaveLength(2);
    expect(await rows('redeliver-c')).toHaveLength(1);
    await service.context.writer.write([interval('redeliver', 0, { last_mode: 'resent' }, 20)]);
    await service.context.writer.write([interval('redeliver', 0, { last_mode: 'stale redelivery' }, 10)]);
    expect((await rows('redeliver'))[0].last_mode).toBe('resent');
    // The same reading twice in one batch: the later one wins.
    await service.context.writer.write([interval('redeliver', 5, { last_mode: 'a' }, 30), interval('redeliver', 5, { last_mode: 'b' }, 30)]);
    expect((await rows('redeliver'))[1].last_mode).toBe('b');
  });

  it('stores a batch mixing new readings with stored ones whole, and reads each device’s newest reading by start', async () => {
    await service.context.writer.write([interval('mix', 0, { last_mode: 'a' }, 10)]);
    // One reading already stored: the batch is merged, its new readings stored with it.
    await service.context.writer.write([interval('mix', 10, { last_mode: 'ten' }, 10), interval('mix', 0, { last_mode: 'b' }, 20), interval('mix-2', 0, { last_mode: 'other' }, 10)]);
    expect((await rows('mix')).map((r) => [new Date(r.start_time).getTime(), r.last_mode])).toEqual([[min(0), 'b'], [min(10), 'ten']]);
    expect((await rows('mix-2')).map((r) => r.last_mode)).toEqual(['other']);
    // A reading for an earlier period arriving last is not the newest.
    await service.context.writer.write([interval('mix', 5, { last_mode: 'late' }, 30)]);
    const devices = ['mix', 'mix-2', 'never-reported'].map((device_id) => ({ integrator_id: 'acme', device_id }));
    const latest = await service.context.readings.latest(db.knex, { devices, limit: 10 });
    expect(latest.map((r) => [r.device_id, r.start_time, r.last_mode])).toEqual([['mix-2', min(0), 'other'], ['mix', min(10), 'ten']]);
    const after = { start_time: min(0), integrator_id: 'acme', device_id: 'mix-2' };
    expect((await service.context.readings.latest(db.knex, { devices, limit: 10, after })).map((r) => r.device_id)).toEqual(['mix']);
  });

  it('copies any text: tabs, line breaks, backslashes and quotes survive COPY', async () => {
    const tricky = 'tab\there\nnew line \\ back "quote" \\N';
    await service.context.writer.write([interval('copy', 0, { last_mode: tricky, oem_raw_data: JSON.stringify({ note: tricky, n: [1, 2] }) })]);
    const [r] = await rows('copy');
    expect(r.last_mode).toBe(tricky);
    expect(r.oem_raw_data).toEqual({ note: tricky, n: [1, 2] });
  });

  it('makes partitions on demand for any day a reading falls in', async () => {
    const old = Date.UTC(2019, 4, 4, 10);
    await service.context.writer.write([{ ...interval('old', 0), start_time: new Date(old).toISOString() }]);
    const parts = (await db.knex.raw(`select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'readings'`)).rows.map((r: any) => r.relname);
    expect(parts).toContain('readings_p20190504');
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    expect(parts).toContain(`readings_p${today}`);
  });

  it('answers what devices delivered in their windows (devicePerformance), for internal callers only', async () => {
    await service.context.writer.write([
      interval('perf-1', 0, { battery_total_energy_discharge_wh: 500, battery_total_energy_charge_wh: 0 }),
      interval('perf-1', 5, { battery_total_energy_discharge_wh: 300, battery_total_energy_charge_wh: 100 }),
      interval('perf-1', 30, { battery_total_energy_discharge_wh: 0, battery_total_energy_charge_wh: 250 }),
      interval('perf-2', 0, { battery_total_energy_discharge_wh: 50, battery_total_energy_charge_wh: 0 }),
    ]);
    const iso = (m: number) => new Date(min(m)).toISOString();
    const body = {
      windows: [{ starts_at: iso(0), ends_at: iso(10), mode: 'DISCHARGE' as const }, { starts_at: iso(30), ends_at: iso(35), mode: 'CHARGE' as const }],
      devices: [
        { integrator_id: 'acme', device_id: 'perf-1', windows: [0, 1] },
        { integrator_id: 'acme', device_id: 'perf-2', windows: [0] },
        { integrator_id: 'acme', device_id: 'silent', windows: [0, 1] },
        { integrator_id: 'other', device_id: 'perf-1', windows: [0] },
      ],
    };
    const r = await call(transport, TelemetryOperations.devicePerformance, { principal: SYSTEM, body }, { timeoutMs: 5000 });
    expect(r.devices.map((d) => [d.integrator_id, d.device_id, d.actual_energy_wh, d.covered_s])).toEqual([
      ['acme', 'perf-1', 700 + 250, 900],
      ['acme', 'perf-2', 50, 300],
      ['acme', 'silent', null, 0],
      ['other', 'perf-1', null, 0],
    ]);
    await expect(call(transport, TelemetryOperations.devicePerformance, { principal: SYSTEM, body: { ...body, devices: [{ integrator_id: 'acme', device_id: 'perf-1', windows: [2] }] } }, { timeoutMs: 5000 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(call(transport, TelemetryOperations.devicePerformance, { principal: { ...SYSTEM, kind: 'UTILITY', utility_id: 'u' }, body }, { timeoutMs: 5000 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
}
