import type { Knex, Migration } from '@efs/db';

/**
 * Readings, partitioned by day of their start (partitions are created ahead by the service and on
 * demand for older or later days, see PartitionStore), one row per device and start: a resend
 * replaces. `source` tells a BATTERY interval from one derived from BATTERY_COUNTER readings,
 * which are kept as they came in `counter_readings` so that intervals can be derived again when
 * a late reading falls between two others. `latest` points at each device's newest reading.
 */
export const readings: Migration = {
  name: '20261124000000_readings',
  async up(knex: Knex, schema: string) {
    await knex.raw(
      `create table ??.readings (
        integrator_id text not null,
        device_id text not null,
        start_time timestamptz not null,
        duration_s double precision not null,
        source text not null check (source in ('INTERVAL', 'COUNTER')),
        site_id text not null,
        received_at bigint not null,
        last_is_online boolean,
        last_mode text,
        battery_last_power_charge_w double precision,
        battery_last_power_discharge_w double precision,
        battery_total_energy_charge_wh double precision,
        battery_total_energy_discharge_wh double precision,
        battery_last_stored_energy_wh double precision,
        battery_last_capacity_energy_wh double precision,
        battery_last_state_of_charge_percentage double precision,
        battery_last_state_of_health_percentage double precision,
        battery_last_backup_reserve_percentage double precision,
        last_is_grid_online boolean,
        home_total_energy_wh double precision,
        home_last_power_w double precision,
        solar_total_energy_wh double precision,
        solar_last_power_w double precision,
        oem_raw_data jsonb,
        primary key (integrator_id, device_id, start_time)
      ) partition by range (start_time)`,
      [schema],
    );
    await knex.raw(
      `create table ??.counter_readings (
        integrator_id text not null,
        device_id text not null,
        ts timestamptz not null,
        site_id text not null,
        received_at bigint not null,
        charge_wh double precision not null,
        discharge_wh double precision not null,
        state_of_charge_percentage double precision,
        primary key (integrator_id, device_id, ts)
      ) partition by range (ts)`,
      [schema],
    );
    await knex.raw(
      `create table ??.latest (
        integrator_id text not null,
        device_id text not null,
        start_time timestamptz not null,
        primary key (integrator_id, device_id)
      )`,
      [schema],
    );
    // Read models: which devices a utility may read (enrollments) and whose programs are whose.
    await knex.schema.withSchema(schema).createTable('programs', (t) => {
      t.text('id').primary();
      t.text('utility_id').notNullable();
      t.text('updated_at').notNullable();
    });
    await knex.schema.withSchema(schema).createTable('enrollments', (t) => {
      t.text('id').primary();
      t.text('utility_id').notNullable();
      t.text('program_id').notNullable();
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.jsonb('device_ids').notNullable();
      t.text('status').notNullable();
      t.text('updated_at').notNullable();
      t.index(['program_id', 'status']);
    });
  },
  async down(knex: Knex, schema: string) {
    for (const t of ['enrollments', 'programs', 'latest', 'counter_readings', 'readings']) await knex.schema.withSchema(schema).dropTableIfExists(t);
  },
};
