import type { Knex, Migration } from '@efs/db';

/**
 * Subscriptions, the messages they carry (stored once, in the order the feed reads them), the
 * deliveries (a durable queue, one row per message and endpoint, with every attempt), and the
 * read models that say whom a message concerns.
 */
export const webhooks: Migration = {
  name: '20261210000000_webhooks',
  async up(knex: Knex, schema: string) {
    const s = { createTable: (name: string, build: (t: Knex.CreateTableBuilder) => void) => knex.schema.withSchema(schema).createTable(name, build) };
    await s.createTable('subscriptions', (t) => {
      t.uuid('id').primary();
      t.text('tenant_kind').notNullable();
      t.text('tenant_id').notNullable();
      t.text('url').notNullable();
      t.specificType('event_types', 'text[]').notNullable();
      t.text('description');
      t.boolean('enabled').notNullable();
      t.text('disabled_reason');
      // Sealed with the key-encryption key (enc:v1:...): only signing opens them.
      t.text('secret').notNullable();
      t.text('previous_secret');
      t.timestamp('previous_secret_until', { useTz: true });
      t.timestamp('failing_since', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['tenant_kind', 'tenant_id', 'created_at', 'id']);
    });
    await knex.raw(`alter table ??.subscriptions add constraint subscriptions_tenant_kind_check check (tenant_kind in ('integrator','utility'))`, [schema]);
    await s.createTable('messages', (t) => {
      t.bigIncrements('seq').primary();
      t.text('id').notNullable().unique();
      t.text('tenant_kind').notNullable();
      t.text('tenant_id').notNullable();
      t.text('event_type').notNullable();
      t.text('resource_key').notNullable();
      t.text('body').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['tenant_kind', 'tenant_id', 'seq']);
    });
    await s.createTable('deliveries', (t) => {
      t.uuid('id').primary();
      t.uuid('subscription_id').notNullable().references('id').inTable(`${schema}.subscriptions`).onDelete('CASCADE');
      t.bigInteger('message_seq').notNullable().references('seq').inTable(`${schema}.messages`);
      t.text('resource_key').notNullable();
      t.text('status').notNullable();
      t.integer('attempt_count').notNullable().defaultTo(0);
      t.timestamp('next_attempt_at', { useTz: true });
      t.timestamp('lease_until', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['subscription_id', 'created_at', 'id']);
    });
    await knex.raw(`alter table ??.deliveries add constraint deliveries_status_check check (status in ('pending','sending','succeeded','failed'))`, [schema]);
    // The queue: what is open, per endpoint in message order, and per resource for ordering.
    await knex.raw(`create index deliveries_open on ??.deliveries (subscription_id, message_seq) where status in ('pending','sending')`, [schema]);
    await knex.raw(`create index deliveries_open_resource on ??.deliveries (subscription_id, resource_key, message_seq) where status in ('pending','sending')`, [schema]);
    await knex.raw(`create index deliveries_failed on ??.deliveries (subscription_id, updated_at) where status = 'failed'`, [schema]);
    await s.createTable('delivery_attempts', (t) => {
      t.bigIncrements('id').primary();
      t.uuid('delivery_id').notNullable().references('id').inTable(`${schema}.deliveries`).onDelete('CASCADE');
      t.timestamp('attempted_at', { useTz: true }).notNullable();
      t.boolean('succeeded').notNullable();
      t.integer('response_status');
      t.text('error');
      t.integer('duration_ms').notNullable();
      t.index(['delivery_id', 'id']);
    });
    await s.createTable('enrollments', (t) => {
      t.text('id').primary();
      t.text('integrator_id').notNullable();
      t.text('utility_id').notNullable();
      t.text('program_id').notNullable();
      t.text('site_id').notNullable();
      t.specificType('device_ids', 'text[]').notNullable();
      t.specificType('group_ids', 'text[]').notNullable();
      t.text('status').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['program_id', 'status']);
      t.index(['integrator_id', 'status']);
    });
    await knex.raw(`create index enrollments_devices on ??.enrollments using gin (device_ids)`, [schema]);
    await s.createTable('events', (t) => {
      t.text('id').primary();
      t.text('utility_id').notNullable();
      t.text('program_id').notNullable();
      t.jsonb('event').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    // The integrators an event concerns, and whether each was told of it (event.created).
    await s.createTable('event_integrators', (t) => {
      t.text('event_id').notNullable();
      t.text('integrator_id').notNullable();
      t.boolean('announced').notNullable();
      // Its own ids among a SITE or DEVICE event's targets: what its copy of the event shows.
      t.specificType('target_ids', 'text[]').notNullable();
      t.primary(['event_id', 'integrator_id']);
    });
  },
  async down(knex: Knex, schema: string) {
    for (const table of ['event_integrators', 'events', 'enrollments', 'delivery_attempts', 'deliveries', 'messages', 'subscriptions']) await knex.schema.withSchema(schema).dropTableIfExists(table);
  },
};
