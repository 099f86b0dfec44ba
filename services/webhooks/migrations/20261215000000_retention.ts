import type { Knex, Migration } from '@efs/db';

/**
 * Retention: the sweep finds old messages by their time and removes them with their finished
 * deliveries, so it finds a message's deliveries by the message (the foreign key's check on each
 * deleted message needs the same index).
 */
export const retention: Migration = {
  name: '20261215000000_retention',
  async up(knex: Knex, schema: string) {
    await knex.raw('create index deliveries_message on ??.deliveries (message_seq)', [schema]);
    await knex.raw('create index messages_created_at on ??.messages (created_at)', [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.raw('drop index if exists ??.messages_created_at', [schema]);
    await knex.raw('drop index if exists ??.deliveries_message', [schema]);
  },
};
