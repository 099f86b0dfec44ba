import type { Knex, Migration } from '@efs/db';

/** When a site was commissioned: the catalog reads its devices through commissioning while they may still be arriving. */
export const siteViewCreatedAt: Migration = {
  name: '20261122000200_site_view_created_at',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('site_views', (t) => {
      t.timestamp('created_at', { useTz: true });
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('site_views', (t) => {
      t.dropColumn('created_at');
    });
  },
};
