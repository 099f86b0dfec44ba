import type { Knex, Migration } from '@efs/db';

/** Settings requests: what the end user chose for a device, for its cloud to apply. */
export const settings: Migration = {
  name: '20261202000000_settings',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('settings_requests', (t) => {
      t.uuid('id').primary();
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('device_id').notNullable();
      t.integer('backup_reserve_percentage').notNullable();
      t.text('status').notNullable();
      t.text('status_reason');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['integrator_id', 'created_at', 'id']);
      t.index(['integrator_id', 'site_id', 'device_id']);
    });
    await knex.raw(`alter table ??.settings_requests add constraint settings_requests_status_check check (status in ('PENDING','APPLIED','FAILED'))`, [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('settings_requests');
  },
};
