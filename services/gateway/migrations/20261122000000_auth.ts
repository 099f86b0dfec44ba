import type { Knex, Migration } from '@efs/db';

export const auth: Migration = {
  name: '20261122000000_auth',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('integrators', (t) => {
      t.text('id').primary();
      t.text('name').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.withSchema(schema).createTable('client_tokens', (t) => {
      t.uuid('id').primary();
      t.text('integrator_id').notNullable().references('id').inTable(`${schema}.integrators`);
      t.text('token_hash').notNullable().unique();
      t.text('label').notNullable().defaultTo('');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('revoked_at', { useTz: true });
    });
    await knex.schema.withSchema(schema).createTable('utilities', (t) => {
      t.text('id').primary();
      t.text('name').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.withSchema(schema).createTable('utility_keys', (t) => {
      t.uuid('id').primary();
      t.text('utility_id').notNullable().references('id').inTable(`${schema}.utilities`);
      t.text('key_hash').notNullable().unique();
      t.text('label').notNullable().defaultTo('');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('revoked_at', { useTz: true });
    });
  },
  async down(knex: Knex, schema: string) {
    for (const t of ['utility_keys', 'utilities', 'client_tokens', 'integrators']) await knex.schema.withSchema(schema).dropTableIfExists(t);
  },
};
