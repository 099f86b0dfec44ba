import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_S, SignedTokens } from '../src/auth/signedTokens.ts';
import { StaticKeyring } from '../src/auth/signingKeys.ts';

const keyring = StaticKeyring.parse(`k1:${'s'.repeat(40)}`);
const subject = { integrator_id: 'acme', site_id: 'site-1' };
const now = new Date('2026-06-01T12:00:00Z');

describe('the lifetime of a signed token is bounded at verification', () => {
  const tokens = new SignedTokens(keyring, { site: 3600, portalSession: 900 });

  it('accepts a token issued for its kind\'s lifetime, and one whose issuer\'s clock ran up to CLOCK_SKEW_S ahead', async () => {
    expect((await tokens.verify('site', tokens.sign('site', subject, 3600, now).token, now)).ok).toBe(true);
    expect((await tokens.verify('portalSession', tokens.sign('portalSession', subject, 900, now).token, now)).ok).toBe(true);
    const ahead = new Date(now.getTime() + CLOCK_SKEW_S * 1000);
    expect((await tokens.verify('site', tokens.sign('site', subject, 3600, ahead).token, now)).ok).toBe(true);
  });

  it('refuses a validly signed token that expires later than its kind\'s lifetime allows', async () => {
    expect(await tokens.verify('site', tokens.sign('site', subject, 3600 + CLOCK_SKEW_S + 1, now).token, now)).toEqual({ ok: false, reason: 'lifetime' });
    expect(await tokens.verify('site', tokens.sign('site', subject, 10 * 365 * 86400, now).token, now)).toEqual({ ok: false, reason: 'lifetime' });
    // Each kind has its own bound: 3600 s is fine for a site token, too long for this portal session.
    expect(await tokens.verify('portalSession', tokens.sign('portalSession', subject, 3600, now).token, now)).toEqual({ ok: false, reason: 'lifetime' });
  });

  it('accepts the long-lived token again once the time left is within the lifetime (the bound is on what remains)', async () => {
    const t = tokens.sign('site', subject, 7200, now).token;
    expect((await tokens.verify('site', t, now)).ok).toBe(false);
    expect((await tokens.verify('site', t, new Date(now.getTime() + 3600_000))).ok).toBe(true);
  });
});
