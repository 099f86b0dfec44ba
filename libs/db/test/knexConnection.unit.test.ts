import { createRequire } from 'node:module';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { KNEX_CHECKED_VERSION } from '../src/knexConnection.ts';

describe("knex's private client API, used in knexConnection.ts only", () => {
  it('is the knex version knexConnection.ts was checked against (another version: check the file against its source, then update the constant)', () => {
    const installed = (createRequire(import.meta.url)('knex/package.json') as { version: string }).version;
    expect(installed).toBe(KNEX_CHECKED_VERSION);
  });

  it('still has acquireConnection and releaseConnection on its client', async () => {
    const knex = knexFactory({ client: 'pg', connection: 'postgres://unused@127.0.0.1:1/unused', pool: { min: 0, max: 1 } });
    try {
      const client = knex.client as Record<string, unknown>;
      expect(typeof client.acquireConnection).toBe('function');
      expect(typeof client.releaseConnection).toBe('function');
    } finally {
      await knex.destroy();
    }
  });
});
