import type { Knex, Migration } from '@efs/db';

/** The client token that asked for a session token: revoking it voids the session token too. */
export const sessionIssuer: Migration = {
  name: '20261122020000_session_issuer',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('session_tokens', (t) => {
      t.uuid('client_token_id');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('session_tokens', (t) => {
      t.dropColumn('client_token_id');
    });
  },
};
