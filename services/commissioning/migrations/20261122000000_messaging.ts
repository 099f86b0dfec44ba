import type { Knex, Migration } from '@efs/db';
import { createMessagingTables, dropMessagingTables } from '@efs/db';

/** The outbox and processed-message tables of this service's schema. */
export const messaging: Migration = {
  name: '20261122000000_messaging',
  up: (knex: Knex, schema: string) => createMessagingTables(knex, schema),
  down: (knex: Knex, schema: string) => dropMessagingTables(knex, schema),
};
