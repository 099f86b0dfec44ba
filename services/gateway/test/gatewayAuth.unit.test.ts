import { describe, expect, it } from 'vitest';
import { redactUrl } from '@efs/http';
import { CredentialCache } from '../src/auth/credentialCache.ts';
import { SignedTokens, type SigningKey } from '../src/auth/signedTokens.ts';
import { StaticKeyring } from '../src/auth/signingKeys.ts';
import { hashToken, kindOf, newToken } from '../src/auth/tokens.ts';
import { FixedWindowRateLimiter, rateLimitHeaders } from '../src/limits/rateLimiter.ts';

const key = (kid: string, secret = `${kid}-secret-0123456789abcdef0123456789`): SigningKey => ({ kid, secret: Buffer.from(secret) });
const subject = { integrator_id: 'acme', site_id: 'site-1' };
const lifetimes = { site: 3600, portalSession: 3600 };

describe('signed site tokens and portal sessions', () => {
  const signer = new SignedTokens(new StaticKeyring([key('k2'), key('k1')]), lifetimes);

  it('verifies what it signed, with one site, the integrator, one hour and a token id', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const t = signer.sign('site', subject, 3600, now);
    expect(t.token.startsWith('efs_st_')).toBe(true);
    expect(t.expires_at.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    const r = await signer.verify('site', t.token, new Date('2026-01-01T00:59:59Z'));
    expect(r).toEqual({ ok: true, claims: { ...subject, exp: 1767229200, kid: 'k2', jti: t.jti } });
    const issued = signer.sign('portalSession', { ...subject, issuer: 'client-token-id' }, 60, now);
    expect(await signer.verify('portalSession', issued.token, now)).toMatchObject({ ok: true, claims: { cti: 'client-token-id' } });
  });

  it('refuses an expired token, a changed payload, a changed signature and another kind', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const t = signer.sign('site', subject, 3600, now);
    expect(await signer.verify('site', t.token, new Date('2026-01-01T01:00:00Z'))).toEqual({ ok: false, reason: 'expired' });
    const [payload, sig] = t.token.slice('efs_st_'.length).split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `efs_st_${Buffer.from(JSON.stringify({ ...claims, site_id: 'site-2' })).toString('base64url')}.${sig}`;
    expect(await signer.verify('site', forged, now)).toEqual({ ok: false, reason: 'signature' });
    const flipped = t.token.slice(0, -2) + (t.token.endsWith('AA') ? 'BB' : 'AA');
    expect((await signer.verify('site', flipped, now)).ok).toBe(false);
    // The prefix is under the MAC: a site token relabelled as a portal session does not verify.
    expect(await signer.verify('portalSession', t.token.replace('efs_st_', 'efs_ps_'), now)).toEqual({ ok: false, reason: 'signature' });
    expect(await signer.verify('site', 'efs_st_garbage', now)).toEqual({ ok: false, reason: 'malformed' });
    expect(await signer.verify('site', 'efs_st_e30.AAAA', now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('keeps verifying tokens of an older key after rotation, and refuses keys it does not hold', async () => {
    const old = new SignedTokens(new StaticKeyring([key('k1')]), lifetimes).sign('site', subject, 3600);
    expect((await signer.verify('site', old.token)).ok).toBe(true);
    const foreign = new SignedTokens(new StaticKeyring([key('k9')]), lifetimes).sign('site', subject, 3600);
    expect(await signer.verify('site', foreign.token)).toEqual({ ok: false, reason: 'signature' });
    // Same kid, another secret: refused.
    const impostor = new SignedTokens(new StaticKeyring([key('k2', 'another-secret-0123456789abcdef0123')]), lifetimes).sign('site', subject, 3600);
    expect(await signer.verify('site', impostor.token)).toEqual({ ok: false, reason: 'signature' });
  });

  it('parses SITE_TOKEN_SIGNING_KEYS: first signs, all verify, short secrets refused', () => {
    const ring = StaticKeyring.parse('new:0123456789abcdef0123456789abcdef, old:fedcba9876543210fedcba9876543210');
    expect(ring.signingKey().kid).toBe('new');
    expect(() => StaticKeyring.parse('k:short')).toThrow(/at least 32/);
    expect(() => StaticKeyring.parse('0123456789abcdef0123456789abcdef')).toThrow(/kid:secret/);
  });
});

describe('tokens', () => {
  it('are recognisable by prefix and have 32 bytes of entropy', () => {
    const t = newToken('client');
    expect(t).toMatch(/^efs_ct_[A-Za-z0-9_-]{43}$/);
    expect(kindOf(t)).toBe('client');
    expect(kindOf(newToken('utility'))).toBe('utility');
    expect(kindOf('efs_ss_x')).toBe('sessionToken');
    expect(kindOf('efs_ps_x')).toBe('portalSession');
    expect(kindOf('nope')).toBeUndefined();
    expect(newToken('client')).not.toBe(t);
  });
});

describe('credential map', () => {
  const token = newToken('client');
  const rec = { id: 'id-1', kind: 'CLIENT_TOKEN' as const, owner_id: 'acme', token_hash: hashToken(token), created_at: '2026-01-01T00:00:00.000Z', revoked_at: null };

  it('finds a credential by its secret and kind only', () => {
    const c = new CredentialCache();
    c.apply(rec);
    expect(c.find('CLIENT_TOKEN', token)?.owner_id).toBe('acme');
    expect(c.find('UTILITY_KEY', token)).toBeUndefined();
    expect(c.find('CLIENT_TOKEN', newToken('client'))).toBeUndefined();
  });

  it('keeps a revocation final whatever order messages and table loads arrive in', () => {
    const c = new CredentialCache();
    c.apply({ ...rec, revoked_at: '2026-01-02T00:00:00.000Z' });
    c.apply(rec); // an older message replayed, or a stale table read
    expect(c.find('CLIENT_TOKEN', token)?.revoked_at).toBe('2026-01-02T00:00:00.000Z');
    expect(c.isRevoked('id-1')).toBe(true);
    expect(c.isRevoked('id-2')).toBe(false);
  });
});

describe('rate limiter', () => {
  it('allows the limit per window, then refuses with the time to the reset', () => {
    let now = 1_000_000;
    const l = new FixedWindowRateLimiter({ windowSeconds: 60, now: () => now });
    for (let i = 0; i < 120; i++) expect(l.hit('site:a', 120).allowed).toBe(true);
    now += 23_000;
    const refused = l.hit('site:a', 120);
    expect(refused).toEqual({ allowed: false, limit: 120, remaining: 0, resetSeconds: 37, windowSeconds: 60 });
    expect(rateLimitHeaders(refused)).toEqual({ 'ratelimit-policy': '"default";q=120;w=60', ratelimit: '"default";r=0;t=37', 'retry-after': '37' });
    expect(l.hit('site:b', 120).allowed).toBe(true); // another token has its own budget
    now += 37_000;
    expect(l.hit('site:a', 120)).toMatchObject({ allowed: true, remaining: 119, resetSeconds: 60 });
  });

  it('divides the limit among replicas', () => {
    const l = new FixedWindowRateLimiter({ windowSeconds: 60, replicas: 4, now: () => 0 });
    let allowed = 0;
    for (let i = 0; i < 200; i++) if (l.hit('client:x', 1200 / 10).allowed) allowed++;
    expect(allowed).toBe(30);
    expect(new FixedWindowRateLimiter({ windowSeconds: 60, replicas: 4, now: () => 0 }).hit('k', 120).remaining).toBe(116);
  });

  it('forgets ended windows', () => {
    let now = 0;
    const l = new FixedWindowRateLimiter({ windowSeconds: 1, now: () => now });
    for (let i = 0; i < 50; i++) l.hit(`k${i}`, 10);
    now = 5000;
    l.hit('fresh', 10);
    expect(l.trackedKeys).toBe(1);
  });
});

describe('log redaction of URLs', () => {
  it('hides secret query values and keeps the rest', () => {
    expect(redactUrl('/auth/session_token?token=efs_ss_abc&x=1')).toBe('/auth/session_token?token=%5Bredacted%5D&x=1');
    expect(redactUrl('/v1/programs?zip_code=88800')).toBe('/v1/programs?zip_code=88800');
    expect(redactUrl('/v1/programs')).toBe('/v1/programs');
  });
});
