import type { Knex } from 'knex';

/** A migration of one service's schema; `schema` is the service's own schema name. */
export interface Migration {
  /** Timestamped; a service lists its migrations in name order, which is the order they run in. */
  name: string;
  /**
   * Names this migration had before a rename: a database that ran it under one of them has its
   * record renamed before migrating, so it neither runs again nor makes knex report a missing one.
   */
  formerNames?: readonly string[];
  up(knex: Knex, schema: string): Promise<void>;
  down(knex: Knex, schema: string): Promise<void>;
}

/**
 * Brings a service's own schema up to date. Migrations are listed in code (no directory scan),
 * their bookkeeping lives in the same schema, and knex's lock keeps replicas that start
 * together from running them twice.
 */
export async function migrateSchema(knex: Knex, schema: string, migrations: readonly Migration[]): Promise<string[]> {
  await knex.raw('create schema if not exists ??', [schema]);
  await renameFormerMigrations(knex, schema, migrations);
  const source: Knex.MigrationSource<Migration> = {
    getMigrations: async () => [...migrations],
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: (k: Knex) => m.up(k, schema), down: (k: Knex) => m.down(k, schema) }),
  };
  const [, applied] = (await knex.migrate.latest({ migrationSource: source, schemaName: schema, tableName: 'knex_migrations' })) as [number, string[]];
  return applied;
}

/**
 * Carries the records of renamed migrations over to their current names (see Migration.formerNames).
 * Idempotent, so replicas starting together may both run it.
 */
async function renameFormerMigrations(knex: Knex, schema: string, migrations: readonly Migration[]): Promise<void> {
  const renames = migrations.flatMap((m) => (m.formerNames ?? []).map((from) => ({ from, to: m.name })));
  if (renames.length === 0 || !(await knex.schema.withSchema(schema).hasTable('knex_migrations'))) return;
  for (const { from, to } of renames) {
    await knex.raw(
      `update ??.knex_migrations set name = ? where name = ? and not exists (select 1 from ??.knex_migrations where name = ?)`,
      [schema, to, from, schema, to],
    );
  }
}

/**
 * Tables every service keeps in its own schema: the transactional outbox and the record of
 * processed messages that makes redelivery harmless.
 */
export async function createMessagingTables(knex: Knex, schema: string): Promise<void> {
  await knex.schema.withSchema(schema).createTable('outbox', (t) => {
    t.uuid('id').primary();
    t.bigIncrements('seq', { primaryKey: false });
    t.text('topic').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    t.jsonb('headers').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['seq']);
  });
  await knex.schema.withSchema(schema).createTable('processed_messages', (t) => {
    t.text('consumer').notNullable();
    t.text('message_id').notNullable();
    t.jsonb('result');
    t.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['consumer', 'message_id']);
  });
  await createOutboxRelayTables(knex, schema);
}

export async function dropMessagingTables(knex: Knex, schema: string): Promise<void> {
  await dropOutboxRelayTables(knex, schema);
  await knex.schema.withSchema(schema).dropTableIfExists('processed_messages');
  await knex.schema.withSchema(schema).dropTableIfExists('outbox');
}

/**
 * The relay's own bookkeeping beside the outbox: `outbox_quarantine`, rows the relay could not
 * carry (kept with the reason; a key with a row here holds its later rows until the row is
 * retried or discarded), and `outbox_relay_lease`, which lets one relay of a schema publish at a
 * time when several processes share it (gateway replicas, the CLI), so each key keeps its order.
 */
async function createOutboxRelayTables(knex: Knex, schema: string): Promise<void> {
  await knex.schema.withSchema(schema).createTable('outbox_quarantine', (t) => {
    t.uuid('id').primary();
    t.bigInteger('seq').notNullable();
    t.text('topic').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    t.jsonb('headers').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.text('reason').notNullable();
    t.integer('attempts').notNullable();
    t.timestamp('quarantined_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('discarded_at', { useTz: true });
    t.index(['topic', 'key']);
  });
  await knex.schema.withSchema(schema).createTable('outbox_relay_lease', (t) => {
    t.integer('id').primary();
    t.text('holder').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });
}

/**
 * For schemas whose outbox predates the relay tables: creates them unless createMessagingTables
 * (which now makes them too) already did.
 */
async function ensureOutboxRelayTables(knex: Knex, schema: string): Promise<void> {
  if (!(await knex.schema.withSchema(schema).hasTable('outbox_quarantine'))) await createOutboxRelayTables(knex, schema);
}

async function dropOutboxRelayTables(knex: Knex, schema: string): Promise<void> {
  await knex.schema.withSchema(schema).dropTableIfExists('outbox_relay_lease');
  await knex.schema.withSchema(schema).dropTableIfExists('outbox_quarantine');
}

/** The migration that gives an existing outbox its relay tables (see createOutboxRelayTables); every service with an outbox lists it. */
export const outboxRelayMigration: Migration = {
  name: '20261201000000_outbox_relay',
  up: (knex, schema) => ensureOutboxRelayTables(knex, schema),
  down: (knex, schema) => dropOutboxRelayTables(knex, schema),
};
