/**
 * Two gateway replicas on one database: client tokens and utility keys created and revoked with
 * the CLI reach the other replica within seconds without any per-request database lookup; site
 * tokens verify on every replica across a signing-key rotation, and none signed by a revoked key does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable, waitFor } from '@efs/testing';
import { KeyEncryption } from '@efs/db';
import { rotateSigningKey } from '../services/gateway/src/auth/signingKeys.ts';
import { hashToken } from '../services/gateway/src/auth/tokens.ts';
import { credentialCommand, revokeSigningKeyCommand } from '@efs/cli';
import {
  claimsOf,
  redeemPortalSession,
  probeRoutes,
  SANDBOX_INTEGRATOR,
  startGateway,
  startStubbedBackend,
  type GatewayHarness,
  type StubbedBackend,
} from '../services/gateway/test/harness.ts';

const run = await tierAvailable('postgres');
const devEncryption = KeyEncryption.parse(DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY);

describe.runIf(run)('two gateway replicas on one database and one transport', () => {
  let backend: StubbedBackend;
  let a: GatewayHarness;
  let b: GatewayHarness;
  const env = { SITE_TOKEN_SIGNING_KEYS: '', SIGNING_KEYS_REFRESH_MS: '200' };
  const replica = (id: string) => startGateway({ database: backend.database, transport: backend.transport, routes: probeRoutes(), env: { ...env, GATEWAY_INSTANCE_ID: id } });

  beforeAll(async () => {
    backend = await startStubbedBackend({ sandboxSites: ['site-a'] });
    a = await replica('replica-a');
    b = await replica('replica-b');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await backend?.stop();
  });

  const cli = async (...args: string[]) => {
    const out: string[] = [];
    const code = await credentialCommand(args[0] as 'client-token', args[1], args.slice(2), { DATABASE_URL: backend.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) });
    return { code, text: out.join('\n') };
  };

  it('a client token created and revoked with the CLI works on, then stops working on, the other replica within seconds', async () => {
    const created = await cli('client-token', 'create', '--integrator', 'acme', '--name', 'Acme');
    expect(created.code).toBe(0);
    const token = /token: (efs_ct_\S+)/.exec(created.text)![1]!;
    const id = /id: (\S+)/.exec(created.text)![1]!;
    const row = await a.db.knex.withSchema('auth').table('client_tokens').where({ id }).first();
    expect(row.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token);

    // Published by a running gateway's outbox relay (the CLI has no broker here); every replica consumes it.
    await waitFor(async () => (await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status === 200, { timeoutMs: 5000, what: 'new token on replica b' });
    expect((await a.api.withToken(token).post('/v1/probe', { name: 'x' })).body.principal).toMatchObject({ kind: 'CLIENT', integrator_id: 'acme', token_id: id });

    // Authenticating reads memory only: 100 requests with a client token and a site token query no
    // credential table; the only database reads are the periodic key refresh and outbox relay.
    const site = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    const queries: string[] = [];
    const record = (q: { sql: string }) => queries.push(q.sql);
    b.db.knex.on('query', record);
    for (let i = 0; i < 50; i++) {
      expect((await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status).toBe(200);
      expect((await apiClient(b.urls.public, site).get('/v1/site/site-a/probe')).status).toBe(200);
    }
    b.db.knex.removeListener('query', record);
    expect(queries.filter((q) => /client_tokens|utility_keys|session_tokens|integrators/.test(q))).toEqual([]);
    expect(queries.filter((q) => /signing_keys/.test(q)).length).toBeLessThan(15);

    // What this client token issued: a site token, a portal session, a session token not yet redeemed.
    backend.stubs.sites.set('acme', new Set(['acme-site']));
    const issuedSite = (await a.api.withToken(token).post('/v1/auth/site/acme-site')).body.site_access_token as string;
    const redeemedSession = await a.api.withToken(token).post('/v1/sessions', { site: { id: 'acme-site' } });
    const portal = (await redeemPortalSession(a.urls.portal, redeemedSession.body.token)).body.session as string;
    const pending = (await a.api.withToken(token).post('/v1/sessions', { site: { id: 'acme-site' } })).body.token as string;
    expect((await apiClient(b.urls.public, issuedSite).get('/v1/site/acme-site/probe')).status).toBe(200);
    expect((await apiClient(b.urls.public, portal).get('/v1/site/acme-site/probe')).status).toBe(200);

    const revokedAt = Date.now();
    const revoked = await cli('client-token', 'revoke', id);
    expect(revoked).toMatchObject({ code: 0, text: expect.stringContaining(`revoked ${id}`) });
    await waitFor(async () => (await b.api.withToken(token).post('/v1/probe', { name: 'x' })).status === 401, { timeoutMs: 5000, intervalMs: 20, what: 'revocation on replica b' });
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    expect(await a.api.withToken(token).post('/v1/probe', { name: 'x' })).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringContaining('revoked') } });
    expect((await cli('client-token', 'revoke', id)).code).toBe(1);
    // Revoking a client token ends what it issued, on every replica, still without a lookup.
    for (const gw of [a, b]) {
      expect(await apiClient(gw.urls.public, issuedSite).get('/v1/site/acme-site/probe')).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringContaining('revoked') } });
      expect((await apiClient(gw.urls.public, portal).get('/v1/site/acme-site/probe')).status).toBe(401);
    }
    expect((await fetch(`${b.urls.portal}/auth/session_token?token=${pending}`)).status).toBe(401);
    expect((await redeemPortalSession(b.urls.portal, pending)).status).toBe(401);
    expect((await apiClient(b.urls.public, site).get('/v1/site/site-a/probe')).status).toBe(200);
    // Other tokens are untouched.
    expect((await b.api.post('/v1/probe', { name: 'x' })).status).toBe(200);
  });

  it('a revoked utility key stops working on both replicas too', async () => {
    const created = await cli('utility-key', 'create', '--utility', 'grid-co');
    const key = /token: (efs_uk_\S+)/.exec(created.text)![1]!;
    const id = /id: (\S+)/.exec(created.text)![1]!;
    await waitFor(async () => (await b.utility.withToken(key).get('/v1/probe')).status === 200, { timeoutMs: 5000, what: 'utility key on b' });
    expect((await b.utility.withToken(key).get('/v1/probe')).body.principal).toMatchObject({ kind: 'UTILITY', utility_id: 'grid-co', integrator_id: null });
    await cli('utility-key', 'revoke', id);
    await waitFor(async () => (await a.utility.withToken(key).get('/v1/probe')).status === 401 && (await b.utility.withToken(key).get('/v1/probe')).status === 401, {
      timeoutMs: 5000,
      what: 'utility key revoked on both',
    });
  });

  it('a replica that starts after a revocation knows it', async () => {
    const created = await a.store.createClientToken(SANDBOX_INTEGRATOR, 'late');
    await a.store.revokeClientToken(created.id);
    const c = await replica('replica-c');
    try {
      expect((await c.api.withToken(created.token).post('/v1/probe', { name: 'x' })).status).toBe(401);
      expect((await c.api.post('/v1/probe', { name: 'x' })).status).toBe(200);
    } finally {
      await c.stop();
    }
  });

  it('site tokens verify on every replica, and a signing-key rotation invalidates no token in its hour', async () => {
    const before = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    expect((await apiClient(b.urls.public, before).get('/v1/site/site-a/probe')).status).toBe(200);
    const oldKid = claimsOf(before).kid;

    const rotated = await rotateSigningKey(a.db.knex, 'auth', { activationDelayMs: 300, keepMs: 3600_000, encryption: devEncryption });
    expect(rotated.deleted).toEqual([]);
    const after = await waitFor(
      async () => {
        const t = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
        return claimsOf(t).kid === rotated.kid ? t : undefined;
      },
      { timeoutMs: 5000, what: 'replica a signing with the new key' },
    );
    expect(claimsOf(after).kid).not.toBe(oldKid);
    for (const gw of [a, b]) {
      expect((await apiClient(gw.urls.public, after).get('/v1/site/site-a/probe')).status).toBe(200);
      expect((await apiClient(gw.urls.public, before).get('/v1/site/site-a/probe')).status).toBe(200);
    }

    // Once the old key's tokens could all have expired, the next rotation deletes it, and replicas forget it.
    await new Promise((r) => setTimeout(r, 5)); // (keepMs below is 1 ms)
    const second = await rotateSigningKey(a.db.knex, 'auth', { activationDelayMs: 0, keepMs: 1, encryption: devEncryption });
    expect(second.deleted).toEqual([oldKid]);
    await waitFor(async () => (await apiClient(b.urls.public, before).get('/v1/site/site-a/probe')).status === 401, { timeoutMs: 5000, what: 'old key dropped' });
    expect((await apiClient(b.urls.public, after).get('/v1/site/site-a/probe')).status).toBe(200);
  });

  it('a signing key revoked with the CLI ends every token it signed on every replica within seconds; a new key signs', async () => {
    const site = (await a.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
    const session = (await redeemPortalSession(a.urls.portal, (await a.api.post('/v1/sessions', { site: { id: 'site-a' } })).body.token)).body.session as string;
    for (const gw of [a, b]) expect((await apiClient(gw.urls.public, site).get('/v1/site/site-a/probe')).status).toBe(200);

    const out: string[] = [];
    const revoke = (k: string) => revokeSigningKeyCommand(k, { DATABASE_URL: backend.database.url, LOG_LEVEL: 'silent', SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY }, { out: (l) => out.push(l) });
    // Every key that may be signing now (earlier tests rotated): the last revocation leaves none, so a new one takes over.
    const live = ((await a.db.knex.withSchema('auth').table('signing_keys').whereNull('revoked_at').select('kid')) as { kid: string }[]).map((r) => r.kid);
    expect(live).toContain(claimsOf(site).kid);
    expect(live).toContain(claimsOf(session).kid);
    for (const kid of live) expect(await revoke(kid)).toBe(0);
    expect(out.at(-1)).toMatch(new RegExp(`signing key ${live.at(-1)} revoked: .*; new signing key \\S+ signs from now`));
    const started = Date.now();
    await waitFor(
      async () => {
        for (const gw of [a, b]) {
          if ((await apiClient(gw.urls.public, site).get('/v1/site/site-a/probe')).status !== 401) return false;
          if ((await apiClient(gw.urls.public, session).get('/v1/site/site-a/probe')).status !== 401) return false;
        }
        return true;
      },
      { timeoutMs: 5000, what: 'tokens of the revoked key refused on both replicas' },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    // Both replicas sign with the replacement, and what they sign verifies everywhere.
    for (const gw of [a, b]) {
      const fresh = await waitFor(
        async () => {
          const t = (await gw.api.post('/v1/auth/site/site-a')).body.site_access_token as string;
          return live.includes(claimsOf(t).kid) ? undefined : t;
        },
        { timeoutMs: 5000, what: 'a replica signing with the new key' },
      );
      for (const other of [a, b]) expect((await apiClient(other.urls.public, fresh).get('/v1/site/site-a/probe')).status).toBe(200);
    }
    // A kid that is not there (or is revoked already) is refused, with exit 1.
    expect(await revoke(live[0]!)).toBe(1);
    expect(await revoke('k-no-such-key')).toBe(1);
  });
});
