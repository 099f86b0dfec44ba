import { createMessagingTables, dropMessagingTables, type Knex, type Migration } from '@efs/db';

/** Outbox of efs.auth.credentials, site-token signing keys and single-use portal session tokens. */
export const tokens: Migration = {
  name: '20261122010000_tokens',
  async up(knex: Knex, schema: string) {
    await createMessagingTables(knex, schema);
    await knex.schema.withSchema(schema).createTable('signing_keys', (t) => {
      t.text('kid').primary();
      t.text('secret').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('activates_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.withSchema(schema).createTable('session_tokens', (t) => {
      t.uuid('id').primary();
      t.text('token_hash').notNullable().unique();
      t.text('integrator_id').notNullable().references('id').inTable(`${schema}.integrators`);
      t.text('site_id').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('redeemed_at', { useTz: true });
      t.index(['expires_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('session_tokens');
    await knex.schema.withSchema(schema).dropTableIfExists('signing_keys');
    await dropMessagingTables(knex, schema);
  },
};
