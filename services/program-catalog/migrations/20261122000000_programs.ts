import type { Knex, Migration } from '@efs/db';
import { createMessagingTables, dropMessagingTables } from '@efs/db';

export const programs: Migration = {
  name: '20261122000000_programs',
  async up(knex: Knex, schema: string) {
    await createMessagingTables(knex, schema);
    await knex.schema.withSchema(schema).createTable('programs', (t) => {
      t.uuid('id').primary();
      t.text('utility_id').notNullable().index();
      t.text('name').notNullable();
      t.text('description').notNullable();
      t.jsonb('eligible_device_types').notNullable();
      t.boolean('can_auto_enroll').notNullable();
      t.integer('minimum_reserve_percentage').notNullable();
      t.integer('minimum_commitment_months');
      t.jsonb('participation_months').notNullable();
      t.jsonb('rates').notNullable();
      t.jsonb('enrollment_form').notNullable();
      t.text('terms_and_conditions_version');
      t.bigInteger('auto_approve_after_ms');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['created_at', 'id']);
    });
    // Coverage by zip code, one row per zip, so a lookup is an index probe.
    await knex.schema.withSchema(schema).createTable('program_zip_codes', (t) => {
      t.uuid('program_id').notNullable().references('id').inTable(`${schema}.programs`).onDelete('CASCADE');
      t.text('zip_code').notNullable();
      t.primary(['program_id', 'zip_code']);
      t.index(['zip_code']);
    });
    // Every version of a program's terms stays, so an enrollment's agreed version can be shown later.
    await knex.schema.withSchema(schema).createTable('program_terms', (t) => {
      t.uuid('program_id').notNullable().references('id').inTable(`${schema}.programs`).onDelete('CASCADE');
      t.text('version').notNullable();
      t.text('text').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.primary(['program_id', 'version']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('program_terms');
    await knex.schema.withSchema(schema).dropTableIfExists('program_zip_codes');
    await knex.schema.withSchema(schema).dropTableIfExists('programs');
    await dropMessagingTables(knex, schema);
  },
};
