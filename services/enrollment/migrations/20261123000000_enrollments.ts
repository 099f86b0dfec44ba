import type { Knex, Migration } from '@efs/db';

/**
 * Enrollments with their devices, status history and program groups, plus the read models of
 * sites, devices and programs that the enrollment rules need.
 */
export const enrollments: Migration = {
  name: '20261123000000_enrollments',
  async up(knex: Knex, schema: string) {
    const s = () => knex.schema.withSchema(schema);
    const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });

    // Read models, upserted from the state topics (never older over newer: updated_at decides).
    await s().createTable('sites', (t) => {
      t.text('integrator_id').notNullable();
      t.text('id').notNullable();
      for (const f of ['first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2', 'service_account_id']) t.text(f);
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.boolean('deleted').notNullable().defaultTo(false);
      t.primary(['integrator_id', 'id']);
    });
    await s().createTable('devices', (t) => {
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('id').notNullable();
      t.text('type').notNullable();
      ts(t, 'updated_at').notNullable();
      t.boolean('deleted').notNullable().defaultTo(false);
      t.primary(['integrator_id', 'site_id', 'id']);
    });
    await s().createTable('programs', (t) => {
      t.text('id').primary();
      t.text('utility_id').notNullable().index();
      t.text('name').notNullable();
      t.jsonb('eligible_device_types').notNullable();
      t.jsonb('zip_codes').notNullable();
      t.boolean('can_auto_enroll').notNullable();
      t.integer('minimum_commitment_months');
      t.jsonb('enrollment_form').notNullable();
      t.text('terms_and_conditions_version');
      t.bigInteger('auto_approve_after_ms');
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
    });

    await s().createTable('enrollments', (t) => {
      t.uuid('id').primary();
      t.text('integrator_id').notNullable();
      t.text('utility_id').notNullable();
      t.text('site_id').notNullable();
      t.text('program_id').notNullable();
      t.jsonb('device_ids').notNullable();
      t.text('enroll_method').notNullable();
      t.text('status').notNullable();
      t.text('status_reason');
      ts(t, 'enrolled_at');
      ts(t, 'unenrolled_at');
      t.jsonb('program_specific_attributes').notNullable();
      t.boolean('has_agreed_to_terms_and_conditions');
      t.text('terms_and_conditions_version');
      ts(t, 'auto_approve_at');
      ts(t, 'status_changed_at').notNullable();
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.index(['integrator_id', 'site_id', 'created_at', 'id']);
      t.index(['utility_id', 'program_id', 'created_at', 'id']);
      t.index(['utility_id', 'created_at', 'id']);
    });
    await knex.raw(`alter table ??.enrollments add constraint enrollments_status_check check (status in ('PENDING','ACTIVE','NEEDS_ACTION','REJECTED','UNENROLLED'))`, [schema]);
    await knex.raw(`alter table ??.enrollments add constraint enrollments_method_check check (enroll_method in ('AUTO_ENROLL','USER_ACTION'))`, [schema]);
    // The sandbox auto-approval poller reads only due PENDING rows.
    await knex.raw(`create index enrollments_auto_approve on ??.enrollments (auto_approve_at) where status = 'PENDING' and auto_approve_at is not null`, [schema]);

    // One row per enrolled device. A device is held by at most one open (not REJECTED or
    // UNENROLLED) enrollment per program: the database refuses the second, whatever the race.
    await s().createTable('enrollment_devices', (t) => {
      t.uuid('enrollment_id').notNullable().references('id').inTable(`${schema}.enrollments`).onDelete('CASCADE');
      t.text('integrator_id').notNullable();
      t.text('site_id').notNullable();
      t.text('device_id').notNullable();
      t.text('program_id').notNullable();
      ts(t, 'released_at');
      t.primary(['enrollment_id', 'device_id']);
      t.index(['integrator_id', 'site_id', 'device_id']);
    });
    await knex.raw(`create unique index enrollment_devices_one_open on ??.enrollment_devices (program_id, integrator_id, site_id, device_id) where released_at is null`, [schema]);

    // Every status change: who, when, why.
    await s().createTable('enrollment_history', (t) => {
      t.bigIncrements('id');
      t.uuid('enrollment_id').notNullable().references('id').inTable(`${schema}.enrollments`).onDelete('CASCADE');
      t.text('from_status');
      t.text('to_status').notNullable();
      t.text('trigger').notNullable();
      t.text('actor_kind').notNullable();
      t.text('actor_id');
      t.text('reason');
      ts(t, 'at').notNullable();
      t.index(['enrollment_id', 'id']);
    });

    // Groups of a program's enrollments, named by the utility, targets of GROUP events.
    await s().createTable('program_groups', (t) => {
      t.text('program_id').notNullable();
      t.text('id').notNullable();
      t.text('utility_id').notNullable();
      t.text('name').notNullable();
      ts(t, 'created_at').notNullable();
      ts(t, 'updated_at').notNullable();
      t.primary(['program_id', 'id']);
      t.index(['program_id', 'created_at', 'id']);
    });
    await s().createTable('enrollment_groups', (t) => {
      t.uuid('enrollment_id').notNullable().references('id').inTable(`${schema}.enrollments`).onDelete('CASCADE');
      t.text('program_id').notNullable();
      t.text('group_id').notNullable();
      t.primary(['enrollment_id', 'group_id']);
      t.foreign(['program_id', 'group_id']).references(['program_id', 'id']).inTable(`${schema}.program_groups`).onDelete('CASCADE');
      t.index(['program_id', 'group_id']);
    });
  },
  async down(knex: Knex, schema: string) {
    const s = () => knex.schema.withSchema(schema);
    for (const table of ['enrollment_groups', 'program_groups', 'enrollment_history', 'enrollment_devices', 'enrollments', 'programs', 'devices', 'sites']) await s().dropTableIfExists(table);
  },
};
