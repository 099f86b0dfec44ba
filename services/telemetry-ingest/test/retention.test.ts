import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadingMessage } from '@efs/contracts';
import { migrateSchema, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { createTestDatabase, tierAvailable, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { parseTelemetryConfig } from '../src/config.ts';
import { TELEMETRY_SCHEMA } from '../src/context.ts';
import { DAY_MS, dayOf, partitionSuffix } from '../src/domain/partitions.ts';
import { createTelemetryService } from '../src/service.ts';

const run = await tierAvailable('postgres');
const logger = createLogger({ name: 'test', level: 'silent' });

const reading = (device: string, kind: ReadingMessage['kind'], at: number): ReadingMessage => ({
  integrator_id: 'acme', site_id: 'home', device_id: device, kind, start_time: new Date(at).toISOString(), received_at: new Date(at).toISOString(), duration_s: kind === 'INTERVAL' ? 300 : null, last_is_online: null, last_mode: null,
  battery_last_power_charge_w: null, battery_last_power_discharge_w: null, battery_total_energy_charge_wh: null, battery_total_energy_discharge_wh: null,
  battery_last_stored_energy_wh: null, battery_last_capacity_energy_wh: null, battery_last_state_of_charge_percentage: null, battery_last_state_of_health_percentage: null,
  battery_last_backup_reserve_percentage: null, last_is_grid_online: null, home_total_energy_wh: null, home_last_power_w: null, solar_total_energy_wh: null,
  solar_last_power_w: null, oem_raw_data: null, battery_lifetime_energy_charge_wh: kind === 'COUNTER' ? 10 : null, battery_lifetime_energy_discharge_wh: kind === 'COUNTER' ? 20 : null,
});

describe.runIf(run)('TELEMETRY_RETENTION_DAYS on Postgres', () => {
  let database: TestDatabase;
  let db: Database;
  const today = dayOf(Date.now());
  /** Noon of the day `n` days before today. */
  const daysAgo = (n: number) => today - n * DAY_MS + DAY_MS / 2;

  beforeAll(async () => {
    database = await createTestDatabase('efs_tr');
    db = await openDatabase({ url: database.url, dataDir: '.data/unused', logger, poolMax: 4 });
    await migrateSchema(db.knex, TELEMETRY_SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  /** Runs the service once with `env` (its start does a maintenance pass), writing `readings` first. */
  const pass = async (env: Record<string, string>, readings: ReadingMessage[] = []) => {
    const transport = new InProcessTransport({ logger });
    const service = await createTelemetryService({ logger, transport, db, config: parseTelemetryConfig(env) });
    await service.start();
    try {
      if (readings.length > 0) await service.context.writer.write(readings);
    } finally {
      await service.stop();
      await transport.stop();
    }
  };
  const partitionDays = async (table: string) =>
    (
      (await db.knex.raw(
        `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
         join pg_namespace n on n.oid = p.relnamespace where n.nspname = ? and p.relname = ? order by 1`,
        [TELEMETRY_SCHEMA, table],
      )).rows as { relname: string }[]
    ).map((r) => r.relname.slice(table.length + 1));
  const storedDays = async () =>
    ((await db.knex.raw(`select distinct date_trunc('day', start_time at time zone 'UTC') as d from telemetry.readings where device_id like 'ret-%' order by 1`)).rows as { d: Date }[]).map((r) =>
      partitionSuffix(Date.UTC(r.d.getFullYear(), r.d.getMonth(), r.d.getDate())),
    );

  it('keeps everything without a retention, then drops whole day partitions older than it at the next pass', async () => {
    const ages = [400, 31, 30, 1, 0];
    // Counters two readings a day apart in time give an interval; intervals are stored as they are.
    const readings = ages.flatMap((n) => [reading(`ret-${n}`, 'INTERVAL', daysAgo(n)), reading(`ret-c${n}`, 'COUNTER', daysAgo(n)), reading(`ret-c${n}`, 'COUNTER', daysAgo(n) + 600_000)]);
    await pass({}, readings);
    expect(await storedDays()).toEqual(ages.map((n) => partitionSuffix(today - n * DAY_MS)));

    await pass({});
    expect(await storedDays(), 'no retention: nothing dropped').toHaveLength(ages.length);

    await pass({ TELEMETRY_RETENTION_DAYS: '30' });
    const kept = [30, 1, 0].map((n) => partitionSuffix(today - n * DAY_MS));
    expect(await storedDays()).toEqual(kept);
    for (const table of ['readings', 'counter_readings']) {
      const days = await partitionDays(table);
      expect(days, table).not.toContain(partitionSuffix(today - 31 * DAY_MS));
      expect(days, table).not.toContain(partitionSuffix(today - 400 * DAY_MS));
      expect(days, table).toEqual(expect.arrayContaining(kept));
      // The days ahead are still made.
      expect(days, table).toContain(partitionSuffix(today + 7 * DAY_MS));
    }
    // What is kept is whole: the counters' interval of 30 days ago is still there.
    expect(Number((await db.knex.raw(`select count(*) as n from telemetry.counter_readings where device_id = 'ret-c30'`)).rows[0].n)).toBe(2);
  });

  it('refuses a retention of zero days or one that is not a number, naming the variable', () => {
    expect(() => parseTelemetryConfig({ TELEMETRY_RETENTION_DAYS: '0' })).toThrow(/TELEMETRY_RETENTION_DAYS/);
    expect(() => parseTelemetryConfig({ TELEMETRY_RETENTION_DAYS: 'a month' })).toThrow(/TELEMETRY_RETENTION_DAYS/);
    expect(parseTelemetryConfig({ TELEMETRY_RETENTION_DAYS: '' }).TELEMETRY_RETENTION_DAYS).toBeUndefined();
  });
});
