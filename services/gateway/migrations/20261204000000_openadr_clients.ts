import type { Knex, Migration } from '@efs/db';

/**
 * OpenADR 3 clients (a utility's business-logic client or an integrator's VEN client), their
 * secrets kept hashed, and the access tokens `POST /openadr3/3.1/auth/token` issues, kept hashed
 * with their scopes and expiry: revoking a client ends its tokens at once.
 */
export const openAdrClients: Migration = {
  name: '20261204000000_openadr_clients',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('openadr_clients', (t) => {
      t.text('id').primary();
      t.text('secret_hash').notNullable();
      t.text('role').notNullable();
      t.text('utility_id').references('id').inTable(`${schema}.utilities`);
      t.text('integrator_id').references('id').inTable(`${schema}.integrators`);
      t.text('label').notNullable().defaultTo('');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('revoked_at', { useTz: true });
    });
    await knex.raw(
      `alter table ??.openadr_clients add constraint openadr_clients_owner check ((role = 'BL' and utility_id is not null and integrator_id is null) or (role = 'VEN' and integrator_id is not null and utility_id is null))`,
      [schema],
    );
    await knex.schema.withSchema(schema).createTable('openadr_tokens', (t) => {
      t.text('token_hash').primary();
      t.text('client_id').notNullable().references('id').inTable(`${schema}.openadr_clients`);
      t.text('scopes').notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.index(['expires_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('openadr_tokens');
    await knex.schema.withSchema(schema).dropTableIfExists('openadr_clients');
  },
};
