/**
 * The write of telemetry-ingest alone, on Postgres, without HTTP or Kafka: what one consumed batch
 * costs the database and the writer. Transactions of --batch readings are written through the
 * service's own ReadingWriter (as the readings consumer does), --concurrency at a time (the
 * consumer's TELEMETRY_CONSUMER_CONCURRENCY), with the shape of the fleet bench: --devices devices
 * over 12 partitions, a reading per device every five minutes, each transaction the next readings
 * of one partition's devices. Then, in the same database and transaction sizes, a raw COPY of the
 * same number of rows into the same table (the physical floor). CPU is read from /proc: the
 * Postgres backends of this database only (other users' queries do not count), and this process
 * (the writer's row building and COPY encoding). Also times the latest read of --read-devices
 * devices.
 *
 *   node bench/telemetryMerge.ts [--devices 4000] [--batch 1000] [--transactions 300] [--concurrency 2] [--read-devices 1000]
 *
 * Needs Postgres (make infra-up); makes a database of its own and drops it.
 */
import { parseArgs } from 'node:util';
import type { ReadingMessage } from '@efs/contracts';
import { copyLines, migrateSchema, openDatabase } from '@efs/db';
import { createLogger } from '@efs/logging';
import { createTestDatabase } from '@efs/testing';
import { migrations } from '../services/telemetry-ingest/migrations/index.ts';
import { KnexCounterStore } from '../services/telemetry-ingest/src/store/counterStore.ts';
import { PartitionStore } from '../services/telemetry-ingest/src/store/partitionStore.ts';
import { KnexReadingStore } from '../services/telemetry-ingest/src/store/readingStore.ts';
import { ReadingWriter } from '../services/telemetry-ingest/src/store/readingWriter.ts';
import { partitionOfKey } from '../libs/messaging/src/partitioner.ts';
import { pidCpuMs } from './procCpu.ts';

const { values } = parseArgs({
  options: {
    devices: { type: 'string', default: '4000' },
    batch: { type: 'string', default: '1000' },
    transactions: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '2' },
    'read-devices': { type: 'string', default: '1000' },
  },
});
const DEVICES = Number(values.devices);
const BATCH = Number(values.batch);
const TRANSACTIONS = Number(values.transactions);
const CONCURRENCY = Number(values.concurrency);
const PARTITIONS = 12;
const INTEGRATOR = 'bench-integrator';
const logger = createLogger({ name: 'bench', level: 'warn' });

const database = await createTestDatabase('efs_tmerge');
const db = await openDatabase({ url: database.url, dataDir: '', logger, poolMax: CONCURRENCY + 1 });
try {
  await migrateSchema(db.knex, 'telemetry', migrations);
  const readings = new KnexReadingStore({ schema: 'telemetry', kind: db.kind });
  const partitions = new PartitionStore({ knex: db.knex, schema: 'telemetry', logger });
  const writer = new ReadingWriter({ knex: db.knex, readings, counters: new KnexCounterStore('telemetry'), partitions });
  const base = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 86_400_000;
  // As the service keeps them: yesterday, today and a week ahead.
  await partitions.ensure(Array.from({ length: 9 }, (_, i) => base + i * 86_400_000));

  // The devices of each partition of the readings topic, as the gateway spreads them.
  const byPartition: string[][] = Array.from({ length: PARTITIONS }, () => []);
  for (let d = 0; d < DEVICES; d++) {
    const id = `c${d % 4}-d${d}`;
    byPartition[partitionOfKey(`${INTEGRATOR}/${id}`, PARTITIONS)]!.push(id);
  }
  const next = byPartition.map(() => 0);
  /** The next `BATCH` readings of partition `p`: its devices in turn, five minutes apart. */
  const batchOf = (p: number): ReadingMessage[] => {
    const devices = byPartition[p]!;
    const out: ReadingMessage[] = [];
    for (let i = 0; i < BATCH; i++) {
      const n = next[p]!++;
      out.push({
        integrator_id: INTEGRATOR, site_id: 'site', device_id: devices[n % devices.length]!, kind: 'INTERVAL',
        start_time: new Date(base + Math.floor(n / devices.length) * 300_000).toISOString(), received_at: new Date().toISOString(), duration_s: 300,
        last_is_online: true, last_mode: 'SELF_CONSUMPTION', battery_last_power_charge_w: 0, battery_last_power_discharge_w: 1800 + (n % 700),
        battery_total_energy_charge_wh: 0, battery_total_energy_discharge_wh: 150 + (n % 60), battery_last_stored_energy_wh: 5400, battery_last_capacity_energy_wh: 13500,
        battery_last_state_of_charge_percentage: 40 + (n % 50), battery_last_state_of_health_percentage: null, battery_last_backup_reserve_percentage: null,
        last_is_grid_online: null, home_total_energy_wh: null, home_last_power_w: 2500, solar_total_energy_wh: null, solar_last_power_w: 700, oem_raw_data: null,
        battery_lifetime_energy_charge_wh: null, battery_lifetime_energy_discharge_wh: null,
      });
    }
    return out;
  };

  const backends = async () => ((await db.knex.raw('select pid from pg_stat_activity where datname = current_database()')).rows as { pid: number }[]).map((r) => r.pid);
  const cpuOf = (pids: number[]) => pids.reduce((s, pid) => s + pidCpuMs(pid), 0);
  /**
   * Runs `work` on `CONCURRENCY` lanes for `TRANSACTIONS` transactions, each on the next batch of
   * its partition (made before the clock starts, so this process's CPU is the write's alone);
   * CPU ms of the backends and of this process.
   */
  const measure = async <T>(name: string, make: (p: number) => T, write: (batch: T) => Promise<void>) => {
    next.fill(0);
    // Warm: every pooled connection opened (and its backend counted) before the clock starts.
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, lane) => write(make(lane))));
    const batches = Array.from({ length: TRANSACTIONS }, (_, i) => make((i + CONCURRENCY) % PARTITIONS));
    const pids = await backends();
    const [pg0, node0, t0] = [cpuOf(pids), process.cpuUsage(), performance.now()];
    let i = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (i < TRANSACTIONS) await write(batches[i++]!);
    }));
    const seconds = (performance.now() - t0) / 1000;
    const node = process.cpuUsage(node0);
    const pidsAfter = await backends();
    if (pidsAfter.some((p) => !pids.includes(p))) console.log(`  (${name}: new backends during the run; their CPU is not counted)`);
    const per1000 = (ms: number) => ((ms / (TRANSACTIONS * BATCH)) * 1000).toFixed(2);
    console.log(`${name.padEnd(34)} ${(TRANSACTIONS * BATCH / seconds).toFixed(0).padStart(7)} rows/s   postgres backends ${per1000(cpuOf(pids) - pg0).padStart(6)} ms/1000   node ${per1000((node.user + node.system) / 1000).padStart(6)} ms/1000`);
  };

  console.log(`${DEVICES} devices, ${TRANSACTIONS} transactions of ${BATCH} readings, ${CONCURRENCY} at a time`);
  await measure('ReadingWriter.write (the service)', batchOf, (batch) => writer.write(batch));

  // The same rows again, COPY straight into the table under another integrator.
  const cols = ['integrator_id', 'device_id', 'start_time', 'duration_s', 'source', 'site_id', 'received_at', 'last_is_online', 'last_mode', 'battery_last_power_charge_w', 'battery_last_power_discharge_w', 'battery_total_energy_charge_wh', 'battery_total_energy_discharge_wh', 'battery_last_state_of_charge_percentage', 'battery_last_stored_energy_wh', 'battery_last_capacity_energy_wh', 'home_last_power_w', 'solar_last_power_w'];
  const copyText = (p: number) =>
    batchOf(p).map((m) => [`bench-copy-reference`, m.device_id, m.start_time, 300, 'INTERVAL', 'site', Date.parse(m.received_at), 't', m.last_mode, 0, m.battery_last_power_discharge_w, 0, m.battery_total_energy_discharge_wh, m.battery_last_state_of_charge_percentage, 5400, 13500, 2500, 700].join('\t') + '\n').join('');
  await measure('raw COPY, same rows and sizes', copyText, (text) => db.knex.transaction((trx) => copyLines(trx, db.kind, 'telemetry.readings', cols, [text])));

  // Latest for READ devices (the first partition's devices first), as latestTelemetry asks.
  const ids = byPartition.flat().slice(0, Number(values['read-devices']));
  const devices = ids.map((device_id) => ({ integrator_id: INTEGRATOR, device_id }));
  await readings.latest(db.knex, { devices, limit: 1000 });
  const t0 = performance.now();
  const reads = 20;
  let got = 0;
  for (let r = 0; r < reads; r++) got = (await readings.latest(db.knex, { devices, limit: 1000 })).length;
  console.log(`latest of ${devices.length} devices: ${((performance.now() - t0) / reads).toFixed(1)} ms a read (${got} rows)`);
} finally {
  await db.close();
  await database.drop();
}
