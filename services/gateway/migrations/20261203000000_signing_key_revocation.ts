import type { Knex, Migration } from '@efs/db';

/** A signing key retired at once (`efs signing-key revoke KID`): every replica drops it at its next key refresh. */
export const signingKeyRevocation: Migration = {
  name: '20261203000000_signing_key_revocation',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('signing_keys', (t) => {
      t.timestamp('revoked_at', { useTz: true });
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('signing_keys', (t) => {
      t.dropColumn('revoked_at');
    });
  },
};
