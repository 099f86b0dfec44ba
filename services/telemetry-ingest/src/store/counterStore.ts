import { createHash } from 'node:crypto';
import type { Knex } from '@efs/db';
import type { CounterPoint } from '../domain/counters.ts';
import type { DeviceRef } from './readingStore.ts';

/** The raw BATTERY_COUNTER readings, from which intervals are derived. */
export interface CounterStore {
  /**
   * Takes a transaction-scoped lock on each device, in one global order (no deadlock between
   * batches that share devices, as during a consumer-group rebalance): until the transaction ends,
   * nobody else derives intervals of these devices from a view that misses this batch's readings.
   */
  lockDevices(trx: Knex.Transaction, devices: readonly DeviceRef[]): Promise<void>;
  /** Upserts readings (a reading for the same device and time accepted later replaces it). */
  upsert(trx: Knex.Transaction, points: readonly CounterPoint[]): Promise<void>;
  /**
   * Per device, the stored readings from the one just before `from` to the one just after `to`:
   * everything the intervals starting in [predecessor, to] are computed from.
   */
  around(trx: Knex.Transaction, ranges: readonly (DeviceRef & { from: number; to: number })[]): Promise<CounterPoint[]>;
}

/**
 * How many advisory locks the counter devices share. A transaction holds one lock per distinct
 * key until it ends, in Postgres's shared lock table (max_locks_per_transaction × max_connections
 * slots, 6,400 by default, shared with every other lock on the server): a group of 5,000 readings
 * with a lock per device could take thousands, and two writers per replica more than the table
 * holds ("out of shared memory" for everyone). 1,024 keys bound it; devices that share a key only
 * wait for each other while both are written at once.
 */
export const COUNTER_LOCKS = 1024;
/** The 64-bit advisory-lock numbers this service's counter locks start at (a hash of its name: apart from anyone else's). */
const LOCK_BASE = createHash('sha256').update('efs.telemetry.counter-locks').digest().readBigInt64BE(0) & ~0xffffn;

/** A device's advisory-lock key: one of COUNTER_LOCKS, by a hash of its name. */
export const lockKey = (d: DeviceRef): bigint => LOCK_BASE + BigInt(createHash('sha256').update(`${d.integrator_id}\u0000${d.device_id}`).digest().readUInt32BE(0) % COUNTER_LOCKS);

type Row = Omit<CounterPoint, 'ts' | 'received_at'> & { ts: Date | string; received_at: string | number };

export class KnexCounterStore implements CounterStore {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `"${schema}"."counter_readings"`;
  }

  async lockDevices(trx: Knex.Transaction, devices: readonly DeviceRef[]): Promise<void> {
    const keys = [...new Set(devices.map(lockKey))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (keys.length === 0) return;
    await trx.raw('select pg_advisory_xact_lock(k) from unnest(?::bigint[]) with ordinality as l(k, n) order by n', [keys.map(String)]);
  }

  async upsert(trx: Knex.Transaction, points: readonly CounterPoint[]): Promise<void> {
    if (points.length === 0) return;
    // One row per device and time (the one accepted last), or the statement would touch a row twice.
    const newest = new Map<string, CounterPoint>();
    for (const p of points) {
      const k = `${p.integrator_id}\u0000${p.device_id}\u0000${p.ts}`;
      const kept = newest.get(k);
      if (!kept || kept.received_at <= p.received_at) newest.set(k, p);
    }
    const ps = [...newest.values()];
    await trx.raw(
      `insert into ${this.table} as c (integrator_id, device_id, ts, site_id, received_at, charge_wh, discharge_wh, state_of_charge_percentage)
       select * from unnest(?::text[], ?::text[], ?::timestamptz[], ?::text[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[]) order by 1, 2, 3
       on conflict (integrator_id, device_id, ts) do update set site_id = excluded.site_id, received_at = excluded.received_at, charge_wh = excluded.charge_wh,
         discharge_wh = excluded.discharge_wh, state_of_charge_percentage = excluded.state_of_charge_percentage
       where c.received_at <= excluded.received_at`,
      [
        ps.map((p) => p.integrator_id),
        ps.map((p) => p.device_id),
        ps.map((p) => new Date(p.ts).toISOString()),
        ps.map((p) => p.site_id),
        ps.map((p) => String(p.received_at)),
        ps.map((p) => p.charge_wh),
        ps.map((p) => p.discharge_wh),
        ps.map((p) => p.state_of_charge_percentage),
      ] as Knex.RawBinding[],
    );
  }

  async around(trx: Knex.Transaction, ranges: readonly (DeviceRef & { from: number; to: number })[]): Promise<CounterPoint[]> {
    if (ranges.length === 0) return [];
    const cols = 'c.integrator_id, c.device_id, c.ts, c.site_id, c.received_at, c.charge_wh, c.discharge_wh, c.state_of_charge_percentage';
    const rows = await trx.raw(
      `select x.* from unnest(?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[]) as b(integrator_id, device_id, lo, hi)
       cross join lateral (
         (select ${cols} from ${this.table} c where c.integrator_id = b.integrator_id and c.device_id = b.device_id and c.ts < b.lo order by c.ts desc limit 1)
         union all
         (select ${cols} from ${this.table} c where c.integrator_id = b.integrator_id and c.device_id = b.device_id and c.ts between b.lo and b.hi)
         union all
         (select ${cols} from ${this.table} c where c.integrator_id = b.integrator_id and c.device_id = b.device_id and c.ts > b.hi order by c.ts limit 1)
       ) x`,
      [ranges.map((r) => r.integrator_id), ranges.map((r) => r.device_id), ranges.map((r) => new Date(r.from).toISOString()), ranges.map((r) => new Date(r.to).toISOString())],
    );
    return (rows.rows as Row[]).map((r) => ({ ...r, ts: new Date(r.ts).getTime(), received_at: Number(r.received_at) }));
  }
}
