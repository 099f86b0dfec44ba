import type { Knex, Migration } from '@efs/db';

/** Sites, devices and supplements of integrators; ids are the integrators' own, unique per integrator. */
export const sitesDevices: Migration = {
  name: '20261122000100_sites_devices',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('sites', (t) => {
      t.text('integrator_id').notNullable();
      t.text('id').notNullable();
      for (const c of ['first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2', 'service_account_id']) t.text(c);
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['integrator_id', 'id']);
      t.index(['integrator_id', 'created_at', 'id']);
    });
    await knex.schema.withSchema(schema).createTable('devices', (t) => {
      t.text('integrator_id').notNullable();
      t.text('id').notNullable();
      t.text('site_id').notNullable();
      t.text('manufacturer_name');
      t.text('product_name');
      t.text('serial_number');
      t.text('type').notNullable();
      t.jsonb('attributes').notNullable();
      // Set by the device's settings (not by the deprecated input); answered as configuration.reserve_percentage.
      t.integer('reserve_percentage');
      t.timestamp('install_date', { useTz: true }).notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      // A device id is unique per integrator (telemetry and commands name a device by id alone).
      t.primary(['integrator_id', 'id']);
      t.foreign(['integrator_id', 'site_id']).references(['integrator_id', 'id']).inTable(`${schema}.sites`);
      t.index(['integrator_id', 'site_id', 'created_at', 'id']);
    });
    await knex.schema.withSchema(schema).createTable('supplements', (t) => {
      t.uuid('id').primary();
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('device_id');
      t.jsonb('data').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.foreign(['integrator_id', 'site_id']).references(['integrator_id', 'id']).inTable(`${schema}.sites`);
      t.index(['integrator_id', 'site_id', 'created_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('supplements');
    await knex.schema.withSchema(schema).dropTableIfExists('devices');
    await knex.schema.withSchema(schema).dropTableIfExists('sites');
  },
};
