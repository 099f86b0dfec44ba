import type { Knex, Migration } from '@efs/db';

/**
 * The devices each integrator has (read model of efs.commissioning.devices), which the gateway
 * checks telemetry against. Replicas hold it in memory; the table lets a replica start knowing
 * every device without replaying the topic (and keeps it across restarts of the embedded mode,
 * whose in-process transport remembers nothing).
 */
export const deviceDirectory: Migration = {
  name: '20261201000100_device_directory',
  // Listed after the outbox relay migration since it was added, so named after it too.
  formerNames: ['20261124000000_device_directory'],
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('device_directory', (t) => {
      t.text('integrator_id').notNullable();
      t.text('device_id').notNullable();
      t.text('site_id').notNullable();
      t.text('updated_at').notNullable();
      t.boolean('deleted').notNullable().defaultTo(false);
      t.primary(['integrator_id', 'device_id']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('device_directory');
  },
};
