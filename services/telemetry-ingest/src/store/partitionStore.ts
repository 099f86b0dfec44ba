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
    const rows = (
      await this.knex.raw(
        `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
         join pg_namespace n on n.oid = p.relnamespace where n.nspname = ? and p.relname = 'readings'`,
        [this.schema],
      )
    ).rows as { relname: string }[];
    for (const r of rows) {
      const day = dayOfSuffix(r.relname);
      if (day !== undefined) this.known.add(day);
    }
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
