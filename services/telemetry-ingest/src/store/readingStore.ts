import { copyLines, CopyData, isUniqueViolation, type Database, type Knex } from '@efs/db';
import type { PageCursor } from '../domain/cursor.ts';
import type { EnergyRow } from '../domain/performance.ts';
import { MEASURES, READING_COLUMNS, type StoredReading } from '../domain/reading.ts';

/** A device as readings name it: ids are the integrators' own, so the integrator is part of it. */
export interface DeviceRef {
  integrator_id: string;
  device_id: string;
}

export interface PageQuery {
  devices: readonly DeviceRef[];
  after?: PageCursor;
  limit: number;
}

/** The readings tables: bulk merge of a consumed batch, and the reads utilities and dispatch make. */
export interface ReadingStore {
  /**
   * Stores readings in the caller's transaction: a reading for a device and start already stored
   * replaces it unless the stored one was accepted later (so redelivered or reordered batches
   * cannot undo a resend).
   */
  merge(trx: Knex.Transaction, rows: readonly StoredReading[]): Promise<void>;
  /** Removes intervals derived from counters that start in [from, to] (they are derived again). */
  deleteDerived(trx: Knex.Transaction, ranges: readonly (DeviceRef & { from: number; to: number })[]): Promise<void>;
  /** The devices' latest readings, ordered by start, then integrator, then device. */
  latest(db: Knex, q: PageQuery): Promise<StoredReading[]>;
  /** The devices' readings starting in [from, to), same order. */
  historical(db: Knex, q: PageQuery & { from: number; to: number }): Promise<StoredReading[]>;
  /** Readings of the devices that may overlap one of the windows: those starting in it or up to `lookbackMs` before. */
  energyRows(db: Knex, devices: readonly DeviceRef[], windows: readonly { from: number; to: number }[], lookbackMs: number): Promise<(EnergyRow & DeviceRef)[]>;
}

const STAGE = 'pg_temp.readings_stage';
const cols = READING_COLUMNS.map((c) => `"${c}"`).join(', ');
const updates = READING_COLUMNS.filter((c) => !['integrator_id', 'device_id', 'start_time'].includes(c))
  .map((c) => `"${c}" = excluded."${c}"`)
  .join(', ');

type Row = Omit<StoredReading, 'start_time' | 'received_at' | 'oem_raw_data'> & { start_time: Date | string; received_at: string | number; oem_raw_data: unknown };

function fromRow(r: Row): StoredReading {
  const out = { ...r } as unknown as StoredReading;
  out.start_time = new Date(r.start_time).getTime();
  out.received_at = Number(r.received_at);
  out.oem_raw_data = r.oem_raw_data === null || r.oem_raw_data === undefined ? null : typeof r.oem_raw_data === 'string' ? r.oem_raw_data : JSON.stringify(r.oem_raw_data);
  return out;
}

/**
 * Readings as COPY data, columns in READING_COLUMNS order (with `seq`, the reading's place in the
 * batch, first): written straight from the readings into bytes, without an array of values, a
 * Date or a string a row on the way.
 */
function copyDataOf(rows: readonly StoredReading[], seq: boolean): Buffer[] {
  const out = new CopyData();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (seq) out.number(i).tab();
    out.value(r.integrator_id).tab().value(r.device_id).tab().time(r.start_time).tab().number(r.duration_s).tab().raw(r.source).tab().value(r.site_id).tab().number(r.received_at);
    for (const m of MEASURES) out.tab().value(r[m]);
    out.tab().value(r.oem_raw_data).end();
  }
  return out.chunks();
}

/** Two transactions waiting for each other's rows (Postgres aborts one of them). */
const isDeadlock = (err: unknown): boolean => (err as { code?: string } | null)?.code === '40P01';

/** Device lists travel as two parallel arrays (one bind each, whatever their length). */
const deviceArrays = (devices: readonly DeviceRef[]): Knex.RawBinding[] => [devices.map((d) => d.integrator_id), devices.map((d) => d.device_id)];

export class KnexReadingStore implements ReadingStore {
  private readonly schema: string;
  private readonly kind: Database['kind'];

  constructor(opts: { schema: string; kind: Database['kind'] }) {
    this.schema = opts.schema;
    this.kind = opts.kind;
  }

  private t(table: string): string {
    return `"${this.schema}"."${table}"`;
  }

  /**
   * Readings are almost always new (a device reports each period once), so they are first COPYed
   * straight into the table, under a savepoint: the cheapest write there is (no staging table, no
   * conflict handling, no second statement). A reading already stored, or one the batch holds
   * twice, makes the primary key refuse the COPY (a concurrent batch holding one of them makes it
   * wait for that batch's end, then refuse); the savepoint is rolled back and the batch merged:
   * COPY into a temporary staging table, then one INSERT ... ON CONFLICT from it, which keeps one
   * row per device and start (the last of the batch when a batch holds the same reading twice,
   * `seq`) in key order so that concurrent batches lock rows in the same order. Redeliveries and
   * resends take the merge; both paths store the same rows.
   */
  async merge(trx: Knex.Transaction, rows: readonly StoredReading[]): Promise<void> {
    if (rows.length === 0) return;
    await trx.raw('savepoint fresh_readings');
    try {
      await copyLines(trx, this.kind, this.t('readings'), READING_COLUMNS, copyDataOf(rows, false));
      await trx.raw('release savepoint fresh_readings');
      return;
    } catch (err) {
      if (!isUniqueViolation(err) && !isDeadlock(err)) throw err;
      await trx.raw('rollback to savepoint fresh_readings');
      await trx.raw('release savepoint fresh_readings');
    }
    await trx.raw(`create temp table if not exists readings_stage (seq integer, like ${this.t('readings')}) on commit delete rows`);
    await copyLines(trx, this.kind, STAGE, ['seq', ...READING_COLUMNS], copyDataOf(rows, true));
    await trx.raw(
      `insert into ${this.t('readings')} as r (${cols})
       select ${cols} from (
         select distinct on (integrator_id, device_id, start_time) * from ${STAGE}
         order by integrator_id, device_id, start_time, received_at desc, seq desc
       ) s order by integrator_id, device_id, start_time
       on conflict (integrator_id, device_id, start_time) do update set ${updates}
       where r.received_at <= excluded.received_at`,
    );
    await trx.raw(`truncate ${STAGE}`);
  }

  async deleteDerived(trx: Knex.Transaction, ranges: readonly (DeviceRef & { from: number; to: number })[]): Promise<void> {
    if (ranges.length === 0) return;
    await trx.raw(
      `delete from ${this.t('readings')} r using unnest(?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[]) as b(integrator_id, device_id, lo, hi)
       where r.integrator_id = b.integrator_id and r.device_id = b.device_id and r.start_time between b.lo and b.hi and r.source = 'COUNTER'`,
      [...deviceArrays(ranges), ranges.map((r) => new Date(r.from).toISOString()), ranges.map((r) => new Date(r.to).toISOString())],
    );
  }

  async latest(db: Knex, q: PageQuery): Promise<StoredReading[]> {
    const rows = await db.raw(
      `select r.* from unnest(?::text[], ?::text[]) as d(integrator_id, device_id)
       cross join lateral (
         select * from ${this.t('readings')} n where n.integrator_id = d.integrator_id and n.device_id = d.device_id order by n.start_time desc limit 1
       ) r
       where ${this.after(q.after)}
       order by r.start_time, r.integrator_id, r.device_id limit ?`,
      [...deviceArrays(q.devices), ...this.afterBindings(q.after), q.limit],
    );
    return (rows.rows as Row[]).map(fromRow);
  }

  async historical(db: Knex, q: PageQuery & { from: number; to: number }): Promise<StoredReading[]> {
    const rows = await db.raw(
      `select r.* from unnest(?::text[], ?::text[]) as d(integrator_id, device_id)
       join ${this.t('readings')} r on r.integrator_id = d.integrator_id and r.device_id = d.device_id
       where r.start_time >= ?::timestamptz and r.start_time < ?::timestamptz and ${this.after(q.after)}
       order by r.start_time, r.integrator_id, r.device_id limit ?`,
      [...deviceArrays(q.devices), new Date(q.from).toISOString(), new Date(q.to).toISOString(), ...this.afterBindings(q.after), q.limit],
    );
    return (rows.rows as Row[]).map(fromRow);
  }

  async energyRows(db: Knex, devices: readonly DeviceRef[], windows: readonly { from: number; to: number }[], lookbackMs: number): Promise<(EnergyRow & DeviceRef)[]> {
    if (devices.length === 0 || windows.length === 0) return [];
    const unique = [...new Map(devices.map((d) => [`${d.integrator_id}\u0000${d.device_id}`, d])).values()];
    const iso = (ms: number) => new Date(ms).toISOString();
    const lo = windows.map((w) => iso(w.from - lookbackMs));
    const hi = windows.map((w) => iso(w.to));
    // The outer bounds let the primary key's range scan do the work; the windows then drop what falls between them.
    const rows = await db.raw(
      `select r.integrator_id, r.device_id, r.start_time, r.duration_s, r.battery_total_energy_charge_wh, r.battery_total_energy_discharge_wh,
              r.battery_last_power_charge_w, r.battery_last_power_discharge_w
       from unnest(?::text[], ?::text[]) as d(integrator_id, device_id)
       join ${this.t('readings')} r on r.integrator_id = d.integrator_id and r.device_id = d.device_id
         and r.start_time >= ?::timestamptz and r.start_time < ?::timestamptz
       where exists (select 1 from unnest(?::timestamptz[], ?::timestamptz[]) as w(lo, hi) where r.start_time >= w.lo and r.start_time < w.hi)`,
      [...deviceArrays(unique), iso(Math.min(...windows.map((w) => w.from)) - lookbackMs), iso(Math.max(...windows.map((w) => w.to))), lo, hi],
    );
    return (rows.rows as Row[]).map((r) => ({ ...r, start_time: new Date(r.start_time).getTime() })) as (EnergyRow & DeviceRef)[];
  }

  private after(c: PageCursor | undefined): string {
    return c ? '(r.start_time, r.integrator_id, r.device_id) > (?::timestamptz, ?, ?)' : 'true';
  }

  private afterBindings(c: PageCursor | undefined): Knex.RawBinding[] {
    return c ? [new Date(c.start_time).toISOString(), c.integrator_id, c.device_id] : [];
  }
}

