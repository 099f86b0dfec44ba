import type { Knex, Migration } from '@efs/db';

/**
 * The Idempotency-Key of every POST and PATCH: who sent it (scope), to which method and path,
 * a fingerprint of what it carried, and, once answered, the answer to replay. A row in flight
 * holds its key (`claim` names the holder) until `locked_until`; rows live IDEMPOTENCY_KEY_TTL_S.
 */
export const idempotencyKeys: Migration = {
  name: '20261201000200_idempotency_keys',
  // Listed after the outbox relay migration since it was added, so named after it too.
  formerNames: ['20261125000000_idempotency_keys'],
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('idempotency_keys', (t) => {
      t.text('scope').notNullable();
      t.text('method').notNullable();
      t.text('path').notNullable();
      t.text('key').notNullable();
      t.text('fingerprint').notNullable();
      t.uuid('claim').notNullable();
      t.text('state').notNullable();
      t.integer('status');
      t.text('body');
      t.jsonb('headers');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('locked_until', { useTz: true }).notNullable();
      t.primary(['scope', 'method', 'path', 'key']);
      t.index(['created_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('idempotency_keys');
  },
};
