import type { Knex, Migration } from '@efs/db';

/**
 * Demand-response events, their commands and the sites' participation, plus the read models
 * (programs, devices, enrollments and groups) that targets resolve from.
 */
export const dispatch: Migration = {
  name: '20261201000000_dispatch',
  async up(knex: Knex, schema: string) {
    const s = () => knex.schema.withSchema(schema);
    const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
    const raw = (sql: string) => knex.raw(sql, [schema]);

    // Read models, upserted from the state topics (never older over newer: updated_at decides).
    await s().createTable('programs', (t) => {
      t.text('id').primary();
      t.text('utility_id').notNullable();
      t.integer('minimum_reserve_percentage').notNullable();
      ts(t, 'updated_at').notNullable();
    });
    await s().createTable('devices', (t) => {
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('id').notNullable();
      t.text('type').notNullable();
      t.jsonb('attributes').notNullable();
      t.integer('reserve_percentage');
      t.boolean('deleted').notNullable().defaultTo(false);
      ts(t, 'updated_at').notNullable();
      t.primary(['integrator_id', 'site_id', 'id']);
    });
    await s().createTable('enrollments', (t) => {
      t.text('id').primary();
      t.text('integrator_id').notNullable();
      t.text('utility_id').notNullable();
      t.text('site_id').notNullable();
      t.text('program_id').notNullable();
      t.text('status').notNullable();
      ts(t, 'updated_at').notNullable();
    });
    // One row per device of an enrollment, with the enrollment's status: targets resolve here.
    await s().createTable('enrollment_devices', (t) => {
      t.text('enrollment_id').notNullable().references('id').inTable(`${schema}.enrollments`).onDelete('CASCADE');
      t.text('program_id').notNullable();
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('device_id').notNullable();
      t.text('status').notNullable();
      t.primary(['enrollment_id', 'device_id']);
      t.index(['program_id', 'status']);
      t.index(['program_id', 'device_id']);
      t.index(['program_id', 'site_id']);
      t.index(['integrator_id', 'site_id', 'device_id']);
    });
    await s().createTable('enrollment_groups', (t) => {
      t.text('enrollment_id').notNullable().references('id').inTable(`${schema}.enrollments`).onDelete('CASCADE');
      t.text('program_id').notNullable();
      t.text('group_id').notNullable();
      t.primary(['enrollment_id', 'group_id']);
      t.index(['program_id', 'group_id']);
    });
    await s().createTable('program_groups', (t) => {
      t.text('program_id').notNullable();
      t.text('id').notNullable();
      t.boolean('deleted').notNullable().defaultTo(false);
      ts(t, 'updated_at').notNullable();
      t.primary(['program_id', 'id']);
    });

    await s().createTable('events', (t) => {
      t.uuid('id').primary();
      t.text('utility_id').notNullable();
      t.text('program_id').notNullable();
      t.text('target_type').notNullable();
      t.jsonb('target_ids').notNullable();
      // SITE and DEVICE targets with the one integrator each resolved to at creation.
      t.jsonb('resolved_targets');
      t.jsonb('actions').notNullable();
      // The program's minimum when the event was created: the default action level and the user's floor.
      t.integer('minimum_reserve_percentage').notNullable();
      ts(t, 'starts_at').notNullable();
      ts(t, 'ends_at').notNullable();
      // The last status announced; reads compute it from the clock, the scheduler catches this up.
      t.text('status').notNullable();
      ts(t, 'next_transition_at');
      ts(t, 'canceled_at');
      // The fan-out: commands created (visible), then announced (command.created in the outbox).
      ts(t, 'commands_created_at');
      ts(t, 'commands_announced_at');
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.index(['utility_id', 'starts_at', 'id']);
      t.index(['utility_id', 'program_id', 'starts_at', 'id']);
    });
    await raw(`alter table ??.events add constraint events_status_check check (status in ('UPCOMING','IN_PROGRESS','COMPLETED','CANCELED'))`);
    await raw(`create index events_next_transition on ??.events (next_transition_at) where next_transition_at is not null`);
    await raw(`create index events_fan_out_pending on ??.events (created_at) where commands_announced_at is null`);

    // The sites an event reaches, with their participation.
    await s().createTable('event_sites', (t) => {
      t.uuid('event_id').notNullable().references('id').inTable(`${schema}.events`).onDelete('CASCADE');
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.boolean('is_participating').notNullable().defaultTo(true);
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.primary(['event_id', 'integrator_id', 'site_id']);
      t.index(['integrator_id', 'site_id']);
    });

    // One command per targeted device and action. No foreign key to events: only the fan-out of an
    // existing event writes commands, and a per-row check would slow a 100,000-command insert.
    await s().createTable('commands', (t) => {
      t.uuid('id').primary();
      t.uuid('event_id').notNullable();
      t.integer('action_index').notNullable();
      t.text('utility_id').notNullable();
      t.text('program_id').notNullable();
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('device_id').notNullable();
      ts(t, 'starts_at').notNullable();
      ts(t, 'ends_at').notNullable();
      t.text('mode').notNullable();
      t.text('power_mode');
      t.bigInteger('setpoint_w');
      t.boolean('enable_grid_import').notNullable();
      // Reserve: the action's explicit level, the user's level for this event, and the effective one with where it came from.
      t.integer('action_reserve_percentage');
      t.integer('user_reserve_percentage');
      t.integer('backup_reserve_percentage').notNullable();
      t.text('reserve_source').notNullable();
      t.text('status').notNullable();
      // The end user opted out of this one command (legacy dispatch path), whatever the site's choice.
      t.boolean('opted_out').notNullable().defaultTo(false);
      t.text('device_status').notNullable();
      t.text('device_status_reason');
      // SCHEDULED → STARTED → ENDED, announced at starts_at and ends_at (only while status is OK).
      t.text('phase').notNullable();
      ts(t, 'phase_due_at');
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.unique(['event_id', 'action_index', 'integrator_id', 'device_id'], { indexName: 'commands_one_per_device_and_action' });
      t.index(['integrator_id', 'updated_at', 'id']);
      t.index(['integrator_id', 'device_id']);
      t.index(['integrator_id', 'site_id']);
    });
    await raw(`alter table ??.commands add constraint commands_status_check check (status in ('OK','CANCELED','OPT_OUT'))`);
    await raw(`alter table ??.commands add constraint commands_device_status_check check (device_status in ('PENDING','OK','FAILED_OFFLINE','FAILED_FAULT'))`);
    await raw(`create index commands_phase_due on ??.commands (phase_due_at) where phase_due_at is not null`);
  },
  async down(knex: Knex, schema: string) {
    const s = () => knex.schema.withSchema(schema);
    for (const table of ['commands', 'event_sites', 'events', 'program_groups', 'enrollment_groups', 'enrollment_devices', 'enrollments', 'devices', 'programs']) await s().dropTableIfExists(table);
  },
};
