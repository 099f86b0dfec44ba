import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from './infra.ts';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database on the test server (or the server of `admin`, a connection string to
 * one of its databases), so test files never see each other's rows.
 */
export async function createTestDatabase(prefix = 'efs_t', admin = testDatabaseUrl()): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** What a knex instance (or anything that runs raw SQL the same way) offers these helpers. */
interface RawSql {
  raw(sql: string, bindings?: readonly unknown[]): PromiseLike<unknown>;
}

/**
 * Leaves `q.outbox` (created here) with 100 live rows and 4,900 dead ones, as an outbox after
 * its relay deleted what it published: past autovacuum's threshold.
 */
export async function churnedTable(db: RawSql): Promise<void> {
  await db.raw('create schema if not exists q');
  await db.raw('create table q.outbox (id int primary key, body text not null)');
  await db.raw(`insert into q.outbox select i, repeat('x', 200) from generate_series(1, 5000) i`);
  await db.raw('delete from q.outbox where id > 100');
}

/** `q.outbox`'s dead rows, and whether it was ever vacuumed, from the statistics counters (flushed first). */
export async function deadRows(db: RawSql): Promise<{ dead: number; vacuumed: boolean }> {
  await db.raw('select pg_stat_force_next_flush()');
  const { rows } = (await db.raw(`select n_dead_tup::int as dead, last_vacuum is not null as vacuumed from pg_stat_user_tables where schemaname = 'q' and relname = 'outbox'`)) as {
    rows: { dead: number; vacuumed: boolean }[];
  };
  return rows[0]!;
}

/**
 * Holds `size` connections of a knex pool (the whole pool, for a test of a write that waits for
 * one) with open transactions waiting on a gate; the answer releases them. Public knex API only.
 */
export async function holdPool(knex: { transaction(scope: () => Promise<void>): PromiseLike<unknown> }, size: number): Promise<() => Promise<void>> {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = 0;
  let allHeld!: () => void;
  const all = new Promise<void>((r) => (allHeld = r));
  const transactions = Array.from({ length: size }, () =>
    knex.transaction(async () => {
      if (++held === size) allHeld();
      await gate;
    }),
  );
  await all;
  return async () => {
    open();
    await Promise.all(transactions);
  };
}
