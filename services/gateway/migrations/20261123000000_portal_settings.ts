import type { Knex, Migration } from '@efs/db';

/**
 * Per integrator, how its embedded portal may be framed and how it looks (set with
 * `efs portal frame-ancestors` / `efs portal branding`). `frame_ancestors` null: never set, so no
 * page may frame the portal; `branding` holds only the fields the integrator chose.
 */
export const portalSettings: Migration = {
  name: '20261123000000_portal_settings',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('portal_settings', (t) => {
      t.text('integrator_id').primary().references('id').inTable(`${schema}.integrators`);
      t.jsonb('frame_ancestors');
      t.jsonb('branding').notNullable().defaultTo('{}');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('portal_settings');
  },
};
