import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, tablesDue, vacuumDueTables, type TableActivity } from '@efs/db';
import { createLogger } from '@efs/logging';
import { churnedTable, deadRows } from '@efs/testing';

const logger = createLogger({ name: 'test', level: 'silent' });

const table = (t: Partial<TableActivity>): TableActivity => ({ schema: 's', table: 't', sqlName: 's.t', live: 0, dead: 0, insertedSinceVacuum: 0, modifiedSinceAnalyze: 0, xidAge: 1000, ...t });

describe('tablesDue: autovacuum default thresholds', () => {
  it('vacuums past 50 + 20% of the live rows dead, 1,000 + 20% inserted since the last vacuum, or 200 million transactions since the oldest unfrozen row; analyzes past 50 + 10% changed', () => {
    const due = tablesDue([
      table({ table: 'quiet', live: 1000, dead: 250, insertedSinceVacuum: 1200, modifiedSinceAnalyze: 150 }),
      table({ table: 'deleted', live: 1000, dead: 251 }),
      table({ table: 'outbox', live: 0, dead: 51 }),
      table({ table: 'appended', live: 10_000, insertedSinceVacuum: 3001 }),
      table({ table: 'updated', live: 1000, dead: 10, modifiedSinceAnalyze: 151 }),
      table({ table: 'old', live: 1000, xidAge: 200_000_001 }),
      table({ table: 'not yet old', live: 1000, xidAge: 200_000_000 }),
    ]);
    expect(due.vacuum.map((t) => t.table)).toEqual(['deleted', 'outbox', 'appended', 'old']);
    expect(due.analyze.map((t) => t.table)).toEqual(['updated']);
  });
});

/** Embedded PGlite has no autovacuum: a pass vacuums what autovacuum would. */
describe('vacuumDueTables on embedded PGlite', { timeout: 120_000 }, () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'efs-vacuum-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('vacuums a table whose rows were deleted, keeps its live rows, and leaves it alone when nothing changed since', async () => {
    const db = await openDatabase({ dataDir: join(root, 'pass'), logger });
    try {
      await churnedTable(db.knex);
      // A name that needs quoting is taken as it is.
      await db.knex.raw('create table q."Odd ""name"" x" (id int)');
      await db.knex.raw('insert into q."Odd ""name"" x" select generate_series(1, 2000)');
      // A partitioned table's parent has no rows of its own (and no transaction age): never taken.
      await db.knex.raw('create table q.parted (id int) partition by range (id)');
      await db.knex.raw('create table q.parted_1 partition of q.parted for values from (0) to (100000)');
      await db.knex.raw('insert into q.parted select generate_series(1, 10)');
      expect(await deadRows(db.knex)).toEqual({ dead: 4900, vacuumed: false });
      expect((await vacuumDueTables(db.knex, logger)).vacuumed).toEqual(expect.arrayContaining(['q.outbox', 'q.Odd "name" x']));
      expect(await deadRows(db.knex)).toEqual({ dead: 0, vacuumed: true });
      expect((await db.knex.raw('select count(*)::int as n from q.outbox')).rows[0].n).toBe(100);
      const again = await vacuumDueTables(db.knex, logger);
      expect(again.vacuumed.filter((t) => t.startsWith('q.'))).toEqual([]);
      expect(again.analyzed.filter((t) => t.startsWith('q.'))).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
