import type { Knex, Migration } from '@efs/db';

/**
 * Drops the `latest` pointer table: moving each device's pointer cost an upsert (and a dead
 * tuple) per device and batch, about as much as storing the readings themselves. A device's
 * newest reading is now read where it is, through the primary key (integrator, device, start) of
 * the day partitions, newest partition first (see ReadingStore.latest).
 */
export const noLatestPointer: Migration = {
  name: '20261223000000_no_latest_pointer',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('latest');
  },
  async down(knex: Knex, schema: string) {
    await knex.raw(
      `create table ??.latest (
        integrator_id text not null,
        device_id text not null,
        start_time timestamptz not null,
        primary key (integrator_id, device_id)
      )`,
      [schema],
    );
    await knex.raw('insert into ??.latest select integrator_id, device_id, max(start_time) from ??.readings group by integrator_id, device_id', [schema, schema]);
  },
};
