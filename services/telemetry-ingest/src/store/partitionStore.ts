import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { DAY_MS, dayOfSuffix, partitionSuffix } from '../domain/partitions.ts';

/** Tables partitioned by day; a day's partitions of both are created together. */
const PARTITIONED = ['readings', 'counter_readings'] as const;
/** Serialises partition creation between replicas (CREATE TABLE IF NOT EXISTS races on the catalog). */
const PARTITION_LOCK = 7_410_240_001;

/**
 * Day partitions of the readings tables. The service creates them ahead (today and the next days)
 * and, for a reading of another day (a backfill of history, a device clock ahead), on demand before
 * the batch's transaction, so that no write ever finds its partition missing. Creating a partition
 * locks the parent briefly; it happens once per day per table, in its own transaction.
 */
export class PartitionStore {
  private readonly known = new Set<number>();
  private readonly knex: Knex;
  private readonly schema: string;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; schema: string; logger: Logger }) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.logger = opts.logger;
  }

  /** Learns which days exist (another replica may have created some). */
  async load(): Promise<void> {
    for (const { day } of await this.partitions(this.knex, ['readings'])) this.known.add(day);
  }

  /** The day partitions of the given tables, as they are in the catalog. */
  private async partitions(knex: Knex, tables: string[]): Promise<{ name: string; day: number }[]> {
    const rows = (
      await knex.raw(
        `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
         join pg_namespace n on n.oid = p.relnamespace where n.nspname = ? and p.relname = any(?)`,
        [this.schema, tables],
      )
    ).rows as { relname: string }[];
    return rows.flatMap((r) => {
      const day = dayOfSuffix(r.relname);
      return day === undefined ? [] : [{ name: r.relname, day }];
    });
  }

  /**
   * Drops the day partitions of both tables whose day begins before `start` (a retention's first
   * kept day), and answers the days dropped. A whole partition goes at once: no row is deleted
   * one by one, so nothing is left for vacuum. Dropping locks the parent table: a drop that would
   * wait over 5 s behind other work gives up (and is tried again at the next pass) rather than
   * make every write queue behind it.
   */
  async dropBefore(start: number): Promise<string[]> {
    const dropped = await this.knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?)', [PARTITION_LOCK]);
      await trx.raw("set local lock_timeout = '5s'");
      const old = (await this.partitions(trx, [...PARTITIONED])).filter((p) => p.day < start);
      for (const p of old) await trx.raw('drop table if exists ??.??', [this.schema, p.name]);
      return old;
    });
    for (const p of dropped) this.known.delete(p.day);
    const days = [...new Set(dropped.map((p) => partitionSuffix(p.day)))].sort();
    if (days.length > 0) this.logger.info({ days }, 'dropped reading partitions past the retention');
    return days;
  }

  /** Makes sure every given day (first millisecond, UTC) has its partitions. */
  async ensure(days: Iterable<number>): Promise<void> {
    const missing = [...new Set(days)].filter((d) => !this.known.has(d)).sort((a, b) => a - b);
    if (missing.length === 0) return;
    await this.knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?)', [PARTITION_LOCK]);
      for (const day of missing) {
        const [from, to] = [new Date(day).toISOString(), new Date(day + DAY_MS).toISOString()];
        for (const table of PARTITIONED) {
          // DDL takes no bind parameters; the bounds are ISO times this code formatted.
          await trx.raw(`create table if not exists ??.?? partition of ??.?? for values from ('${from}') to ('${to}')`, [this.schema, `${table}_${partitionSuffix(day)}`, this.schema, table]);
        }
      }
    });
    for (const d of missing) this.known.add(d);
    this.logger.info({ days: missing.map((d) => partitionSuffix(d)) }, 'created reading partitions');
  }

  has(day: number): boolean {
    return this.known.has(day);
  }
}
