/**
 * The standalone portal's client secrets are sealed with SIGNING_KEY_ENCRYPTION_KEY like the
 * signing keys, and re-sealed at start when the first KEK changes, so the old KEK can be retired.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyEncryption } from '@efs/db';
import { DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable } from '@efs/testing';
import { KnexPortalOidcStore } from '../src/portal/oidcSettingsStore.ts';
import { AUTH_SCHEMA } from '../src/service.ts';
import { probeRoutes, SANDBOX_INTEGRATOR, startGateway, startStubbedBackend, type StubbedBackend } from './harness.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('standalone portal client secrets at rest', () => {
  let backend: StubbedBackend;
  beforeAll(async () => {
    backend = await startStubbedBackend({ sandboxSites: ['site-a'] });
  });
  afterAll(async () => {
    await backend?.stop();
  });

  const gateway = (kek: string) => startGateway({ database: backend.database, transport: backend.transport, routes: probeRoutes(), env: { SIGNING_KEY_ENCRYPTION_KEY: kek } });

  it('re-seals a client secret with a new first KEK at start; the new KEK alone then opens it', async () => {
    const gw0 = await gateway(DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY);
    const settings = { issuer: 'https://login.example.com', client_id: 'portal', client_secret: 'the-client-secret', site_claim: 'site_id', scopes: [], hosts: ['energy.example.com'] };
    try {
      await new KnexPortalOidcStore(gw0.db.knex, AUTH_SCHEMA, KeyEncryption.parse(DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY)).set(SANDBOX_INTEGRATOR, settings);
      const row = (await gw0.db.knex.withSchema(AUTH_SCHEMA).table('portal_oidc').first('client_secret')) as { client_secret: string };
      expect(row.client_secret).toMatch(/^enc:v1:dev:/);
      expect(row.client_secret).not.toContain('the-client-secret');
    } finally {
      await gw0.stop();
    }
    const next = `next:${randomBytes(32).toString('base64')}`;
    const gw = await gateway(`${next},${DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY}`);
    try {
      const row = (await gw.db.knex.withSchema(AUTH_SCHEMA).table('portal_oidc').first('client_secret')) as { client_secret: string };
      expect(row.client_secret).toMatch(/^enc:v1:next:/);
      const opened = await new KnexPortalOidcStore(gw.db.knex, AUTH_SCHEMA, KeyEncryption.parse(next)).forHost('energy.example.com');
      expect(opened).toMatchObject({ integrator_id: SANDBOX_INTEGRATOR, client_secret: 'the-client-secret', hosts: ['energy.example.com'] });
    } finally {
      await gw.stop();
    }
  });
});
