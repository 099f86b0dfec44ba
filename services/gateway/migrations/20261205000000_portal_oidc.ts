import type { Knex, Migration } from '@efs/db';

/**
 * The standalone portal (decisions.md, "Standalone white-label portal"): per integrator, its
 * OpenID provider and client (`efs portal oidc set`; the client secret sealed with
 * SIGNING_KEY_ENCRYPTION_KEY) and the host names its portal answers on (one integrator per host
 * name); the sign-ins under way (single use, minutes long); and the sessions they started, kept
 * by the SHA-256 of their cookie so that logging out ends one on every replica.
 */
export const portalOidc: Migration = {
  name: '20261205000000_portal_oidc',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('portal_oidc', (t) => {
      t.text('integrator_id').primary().references('id').inTable(`${schema}.integrators`);
      t.text('issuer').notNullable();
      t.text('client_id').notNullable();
      t.text('client_secret').notNullable();
      t.text('site_claim').notNullable();
      t.jsonb('scopes').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.withSchema(schema).createTable('portal_hosts', (t) => {
      t.text('host').primary();
      t.text('integrator_id').notNullable().references('integrator_id').inTable(`${schema}.portal_oidc`).onDelete('CASCADE');
      t.index(['integrator_id']);
    });
    await knex.schema.withSchema(schema).createTable('portal_sign_ins', (t) => {
      t.text('state_hash').primary();
      t.text('integrator_id').notNullable();
      t.text('host').notNullable();
      t.text('code_verifier').notNullable();
      t.text('nonce').notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('used_at', { useTz: true });
      t.index(['expires_at']);
    });
    await knex.schema.withSchema(schema).createTable('portal_logins', (t) => {
      t.text('id_hash').primary();
      t.text('integrator_id').notNullable();
      t.text('host').notNullable();
      t.text('subject').notNullable();
      t.jsonb('site_ids').notNullable();
      t.text('id_token');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('ended_at', { useTz: true });
      t.index(['expires_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTableIfExists('portal_logins');
    await knex.schema.withSchema(schema).dropTableIfExists('portal_sign_ins');
    await knex.schema.withSchema(schema).dropTableIfExists('portal_hosts');
    await knex.schema.withSchema(schema).dropTableIfExists('portal_oidc');
  },
};
