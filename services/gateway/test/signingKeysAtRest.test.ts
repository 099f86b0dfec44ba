/**
 * Site-token signing keys kept in the auth schema are sealed with SIGNING_KEY_ENCRYPTION_KEY: what
 * a database dump holds cannot sign a token the gateway accepts; keys written in plain text by
 * earlier versions are sealed at start and keep verifying the tokens they signed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyEncryption } from '@efs/db';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable } from '@efs/testing';
import { SignedTokens } from '../src/auth/signedTokens.ts';
import { HOUR_LIFETIMES, probeRoutes, SANDBOX_INTEGRATOR, startGateway, startStubbedBackend, type StubbedBackend } from './harness.ts';

const run = await tierAvailable('postgres');
const databaseKeys = { SITE_TOKEN_SIGNING_KEYS: '' };

/** A site token signed with the given key, as someone holding only that key would make it. */
function forge(kid: string, secret: Buffer, siteId = 'site-a'): string {
  const key = { kid, secret };
  return new SignedTokens({ signingKey: () => key, find: async () => key }, HOUR_LIFETIMES).sign('site', { integrator_id: SANDBOX_INTEGRATOR, site_id: siteId }, 3600).token;
}

interface KeyRow {
  kid: string;
  secret: string;
}

describe.runIf(run)('signing keys encrypted at rest', () => {
  let backend: StubbedBackend;
  beforeAll(async () => {
    backend = await startStubbedBackend({ sandboxSites: ['site-a'] });
  });
  afterAll(async () => {
    await backend?.stop();
  });

  const gateway = (env: Record<string, string> = {}) => startGateway({ database: backend.database, transport: backend.transport, routes: probeRoutes(), env: { ...databaseKeys, ...env } });

  it('stores only sealed keys: a token made with what the table holds is refused, one made with the opened key is accepted', async () => {
    const gw = await gateway();
    try {
      const issued = (await gw.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
      expect((await apiClient(gw.urls.public, issued).get('/v1/site/site-a/probe')).status).toBe(200);
      const rows = (await gw.db.knex.withSchema('auth').table('signing_keys').select('kid', 'secret')) as KeyRow[];
      expect(rows.length).toBeGreaterThan(0);
      const dev = KeyEncryption.parse(DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY);
      for (const row of rows) {
        expect(row.secret).toMatch(/^enc:v1:dev:/);
        // Everything a dump shows of the row, tried as the HMAC key.
        for (const guess of [Buffer.from(row.secret, 'utf8'), Buffer.from(row.secret, 'base64url'), Buffer.from(row.secret.split(':').at(-1)!, 'base64url')]) {
          const r = await apiClient(gw.urls.public, forge(row.kid, guess)).get('/v1/site/site-a/probe');
          expect(r).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
        }
        // The same forgery with the opened key works: the refusals above are the seal's doing.
        const opened = dev.open(row.secret, `auth.signing_keys:${row.kid}`);
        expect((await apiClient(gw.urls.public, forge(row.kid, opened)).get('/v1/site/site-a/probe')).status).toBe(200);
      }
    } finally {
      await gw.stop();
    }
  });

  it('seals keys an earlier version stored in plain text at start; tokens they signed keep working', async () => {
    const plain = randomBytes(32);
    const gw0 = await gateway();
    await gw0.db.knex.withSchema('auth').table('signing_keys').insert({ kid: 'legacy', secret: plain.toString('base64url'), activates_at: new Date(Date.now() + 3600_000) });
    await gw0.stop();
    const before = forge('legacy', plain);

    const gw = await gateway();
    try {
      const row = (await gw.db.knex.withSchema('auth').table('signing_keys').where({ kid: 'legacy' }).first()) as KeyRow;
      expect(row.secret).toMatch(/^enc:v1:dev:/);
      expect(row.secret).not.toContain(plain.toString('base64url'));
      expect((await apiClient(gw.urls.public, before).get('/v1/site/site-a/probe')).status).toBe(200);
    } finally {
      await gw.stop();
      await gw.db.knex.withSchema('auth').table('signing_keys').where({ kid: 'legacy' }).delete().catch(() => undefined);
    }
  });

  it('re-seals with a new first KEK, keeps every token valid, and refuses to start with a KEK that cannot open the keys', async () => {
    const gw0 = await gateway();
    const issued = (await gw0.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    await gw0.stop();

    const next = `next:${randomBytes(32).toString('base64')}`;
    const gw = await gateway({ SIGNING_KEY_ENCRYPTION_KEY: `${next},${DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY}` });
    try {
      const rows = (await gw.db.knex.withSchema('auth').table('signing_keys').select('kid', 'secret')) as KeyRow[];
      expect(rows.every((r) => r.secret.startsWith('enc:v1:next:'))).toBe(true);
      expect((await apiClient(gw.urls.public, issued).get('/v1/site/site-a/probe')).status).toBe(200);
    } finally {
      await gw.stop();
    }
    // The new KEK alone opens everything now; the old one alone no longer does.
    const only = await gateway({ SIGNING_KEY_ENCRYPTION_KEY: next });
    expect((await apiClient(only.urls.public, issued).get('/v1/site/site-a/probe')).status).toBe(200);
    await only.stop();
    await expect(gateway({ SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY })).rejects.toThrow(/key-encryption key next, which SIGNING_KEY_ENCRYPTION_KEY does not list/);
  });
});
