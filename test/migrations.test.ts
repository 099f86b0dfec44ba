import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allModules } from '@efs/cli';
import { migrateSchema, openDatabase, outboxRelayMigration, type Database, type Migration } from '@efs/db';
import { createLogger } from '@efs/logging';
import { createTestDatabase, tierAvailable, type TestDatabase } from '@efs/testing';

const run = await tierAvailable('postgres');
const withSchema = allModules.filter((m): m is typeof m & { schema: string } => m.schema !== null);

/**
 * knex runs a service's migrations in the order its list gives and records them by name. A list
 * in name order keeps the two the same story (knex_migrations read in name order is the order
 * things ran), so a migration that depends on another is also named after it.
 */
describe('every service lists its migrations in name order', () => {
  for (const m of withSchema) {
    it(`${m.name} (${m.schema})`, () => {
      const names = m.migrations.map((x) => x.name);
      expect(names).toEqual([...names].sort());
      expect(new Set(names).size).toBe(names.length);
      for (const x of m.migrations) for (const former of x.formerNames ?? []) expect(names).not.toContain(former);
    });
  }
});

/** A fresh database and one that ran the migrations under their earlier names and order both end up migrated. */
describe.runIf(run)('migrating fresh and upgraded databases', () => {
  let database: TestDatabase;
  let db: Database;
  const logger = createLogger({ name: 'migrations-test', level: 'silent' });
  const recorded = async (schema: string) => (await db.knex.withSchema(schema).table('knex_migrations').orderBy('id').select('name')).map((r: { name: string }) => r.name);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url, dataDir: '', logger, poolMax: 4 });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('a fresh database runs every migration of every service', async () => {
    for (const m of withSchema) {
      const schema = `fresh_${m.schema}`;
      expect(await migrateSchema(db.knex, schema, m.migrations)).toEqual(m.migrations.map((x) => x.name));
      expect(await migrateSchema(db.knex, schema, m.migrations)).toEqual([]);
    }
  });

  it('a database that ran a migration under its former name and in the former order runs nothing again', async () => {
    for (const m of withSchema) {
      const schema = `upgraded_${m.schema}`;
      // As the list was before the renames: each renamed migration under its first name, the
      // outbox relay migration where it used to be (last of what existed when it came).
      const former: Migration[] = m.migrations.map((x) => (x.formerNames?.length ? { ...x, name: x.formerNames[0]! } : x));
      const relay = former.findIndex((x) => x.name === outboxRelayMigration.name);
      if (relay >= 0) former.push(...former.splice(relay, 1));
      await migrateSchema(db.knex, schema, former);
      expect(await migrateSchema(db.knex, schema, m.migrations)).toEqual([]);
      expect((await recorded(schema)).sort()).toEqual(m.migrations.map((x) => x.name));
    }
    expect(await db.knex.schema.withSchema('upgraded_auth').hasTable('device_directory')).toBe(true);
  });
});
