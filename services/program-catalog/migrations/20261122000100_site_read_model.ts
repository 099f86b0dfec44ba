import type { Knex, Migration } from '@efs/db';

/**
 * The catalog's own read model of commissioning's sites and devices (from SitesTopic and
 * DevicesTopic): just what eligibility and earnings need. Rows are upserted by `updated_at`, so a
 * redelivered or late message never overwrites a newer state; removals stay as tombstones.
 */
export const siteReadModel: Migration = {
  name: '20261122000100_site_read_model',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('site_views', (t) => {
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('zip_code');
      t.boolean('deleted').notNullable().defaultTo(false);
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['integrator_id', 'site_id']);
    });
    await knex.schema.withSchema(schema).createTable('device_views', (t) => {
      t.text('integrator_id').notNullable();
      t.text('device_id').notNullable();
      t.text('site_id').notNullable();
      t.text('type').notNullable();
      t.jsonb('attributes').notNullable();
      t.boolean('deleted').notNullable().defaultTo(false);
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['integrator_id', 'device_id']);
      t.index(['integrator_id', 'site_id']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('device_views');
    await knex.schema.withSchema(schema).dropTableIfExists('site_views');
  },
};
