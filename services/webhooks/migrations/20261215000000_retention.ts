import type { Knex, Migration } from '@efs/db';

/**
 * Retention: a message's age is from when it was stored (`created_at` is the time of the change
 * it tells, which may be much older); the sweep finds old messages by that time and removes them
 * with their finished deliveries, so it finds a message's deliveries by the message (the foreign
 * key's check on each deleted message needs the same index).
 */
export const retention: Migration = {
  name: '20261215000000_retention',
  async up(knex: Knex, schema: string) {
    await knex.raw('create index deliveries_message on ??.deliveries (message_seq)', [schema]);
    await knex.raw('alter table ??.messages add column stored_at timestamptz not null default now()', [schema]);
    await knex.raw('create index messages_stored_at on ??.messages (stored_at)', [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.raw('drop index if exists ??.messages_stored_at', [schema]);
    await knex.raw('alter table ??.messages drop column if exists stored_at', [schema]);
    await knex.raw('drop index if exists ??.deliveries_message', [schema]);
  },
};
