import type { Knex } from 'knex';
import type { Logger } from '@efs/logging';

/** A table's counters from `pg_stat_all_tables`, as the pass reads them. */
export interface TableActivity {
  schema: string;
  table: string;
  /** The table's name as SQL takes it, each part quoted by Postgres (`format('%I.%I')`). */
  sqlName: string;
  live: number;
  dead: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
  /** Transactions since the table's oldest unfrozen row id (`age(relfrozenxid)`). */
  xidAge: number;
}

interface TablesDue {
  /** Tables to vacuum (and analyze with it). */
  vacuum: TableActivity[];
  /** Tables that need only their statistics made again. */
  analyze: TableActivity[];
}

/** `autovacuum_freeze_max_age`'s default: past it autovacuum vacuums a table (or database) to freeze its rows. */
const FREEZE_MAX_AGE = 200_000_000;

/**
 * Which tables autovacuum would take, by Postgres's default thresholds: a vacuum once the dead
 * rows pass 50 + 20% of the live ones (`autovacuum_vacuum_threshold`, `…_scale_factor`), the rows
 * inserted since the last one pass 1,000 + 20% (`autovacuum_vacuum_insert_threshold`,
 * `…_insert_scale_factor`: an insert-only table's visibility map), or the oldest unfrozen row id
 * is older than `FREEZE_MAX_AGE` transactions (against wraparound); an analyze once the rows
 * changed since the last one pass 50 + 10% (`autovacuum_analyze_threshold`, `…_scale_factor`).
 * Postgres scales by `pg_class.reltuples`, an estimate of the same live rows.
 */
export function tablesDue(tables: readonly TableActivity[]): TablesDue {
  const due: TablesDue = { vacuum: [], analyze: [] };
  for (const t of tables) {
    if (t.dead > 50 + 0.2 * t.live || t.insertedSinceVacuum > 1000 + 0.2 * t.live || t.xidAge > FREEZE_MAX_AGE) due.vacuum.push(t);
    else if (t.modifiedSinceAnalyze > 50 + 0.1 * t.live) due.analyze.push(t);
  }
  return due;
}

/**
 * Autovacuum's work for the embedded PGlite database, which has no background workers: without
 * it every deleted or updated row stays in its table and indexes for good. The outbox is the worst
 * case (each row is inserted, published, then deleted: 28,611 dead rows and 21.7 MB holding 48
 * live ones after 10,000 commissions), and every relay pass walks the dead index entries;
 * commissions slowed from 607 to 387 a second over three bench rounds.
 *
 * One pass: flushes the statistics counters, reads them, and vacuums or analyzes each table past
 * autovacuum's default thresholds (`tablesDue`), the system catalogs included, one statement at a
 * time; once the database's oldest unfrozen row id is older than `FREEZE_MAX_AGE` transactions,
 * it vacuums the whole database instead, as autovacuum does against wraparound. A statement that
 * fails (a table dropped meanwhile) is logged and the pass goes on. On PGlite's one connection
 * each statement waits for the queries before it and holds the ones after it for as long as it
 * runs (a few ms for a small table; the first vacuum of a large insert-only table reads it whole,
 * later ones only the pages changed since). The main command runs a pass every
 * `EMBEDDED_VACUUM_INTERVAL_MS` (`startProcess`). Answers what it vacuumed and analyzed.
 */
export async function vacuumDueTables(knex: Knex, logger: Logger): Promise<{ vacuumed: string[]; analyzed: string[] }> {
  const started = performance.now();
  // The counters of recent statements are flushed at the end of a transaction at most once a
  // second; this makes the next one (this statement's) flush them.
  await knex.raw('select pg_stat_force_next_flush()');
  const { rows } = (await knex.raw(
    `select s.schemaname as schema, s.relname as "table", format('%I.%I', s.schemaname, s.relname) as "sqlName",
            s.n_live_tup::float8 as live, s.n_dead_tup::float8 as dead, s.n_ins_since_vacuum::float8 as "insertedSinceVacuum",
            s.n_mod_since_analyze::float8 as "modifiedSinceAnalyze", age(c.relfrozenxid)::float8 as "xidAge"
       from pg_stat_all_tables s join pg_class c on c.oid = s.relid
      -- Tables that hold rows, the system catalogs' included (each analyze leaves dead rows in
      -- pg_statistic); not a partitioned table's parent (its partitions are tables of their own,
      -- and its relfrozenxid is none: age 2^31), nor a TOAST table (vacuumed with its table).
      where c.relkind in ('r', 'm') and s.schemaname <> 'information_schema'`,
  )) as { rows: TableActivity[] };
  const done = { vacuumed: [] as string[], analyzed: [] as string[] };
  const run = async (statement: string, what: string, into: string[]) => {
    try {
      await knex.raw(statement);
      into.push(what);
    } catch (err) {
      logger.warn({ err, statement }, 'embedded database: a vacuum statement failed; the next pass tries again');
    }
  };
  const { rows: database } = (await knex.raw('select age(datfrozenxid)::float8 as age from pg_database where datname = current_database()')) as { rows: { age: number }[] };
  if ((database[0]?.age ?? 0) > FREEZE_MAX_AGE) {
    await run('vacuum', '(the whole database)', done.vacuumed);
  } else {
    const due = tablesDue(rows);
    for (const t of due.vacuum) await run(`vacuum (analyze) ${t.sqlName}`, `${t.schema}.${t.table}`, done.vacuumed);
    for (const t of due.analyze) await run(`analyze ${t.sqlName}`, `${t.schema}.${t.table}`, done.analyzed);
  }
  if (done.vacuumed.length + done.analyzed.length > 0) logger.debug({ ...done, ms: Math.round(performance.now() - started) }, 'embedded database vacuumed');
  return done;
}
