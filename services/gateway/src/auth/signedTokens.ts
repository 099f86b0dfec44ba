import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TokenPrefix } from './tokens.ts';

/** One HMAC key; `kid` travels in the token so a replica picks the key without asking anyone. */
export interface SigningKey {
  kid: string;
  secret: Buffer;
}

/** Where signing keys come from: the environment or the auth schema (see signingKeys.ts). */
export interface Keyring {
  /** The key new tokens are signed with. */
  signingKey(): SigningKey;
  /** The key a token names; an unknown kid may make the keyring re-read its source (throttled). */
  find(kid: string): Promise<SigningKey | undefined>;
}

/** Stateless tokens: site tokens (`efs_st_`) and portal sessions (`efs_ps_`), one site each. */
export type SignedKind = 'site' | 'portalSession';

export interface SignedClaims {
  integrator_id: string;
  site_id: string;
  /** Expiry, Unix seconds. */
  exp: number;
  kid: string;
  /** Token id: names the token in logs and rate limits without revealing it. */
  jti: string;
  /** Id of the client token that issued it: revoking that client token ends this token too. */
  cti?: string;
}

export type VerifyResult = { ok: true; claims: SignedClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' | 'lifetime' };

/** The longest a token of each kind may live, in seconds: what the gateway issues them for. */
export type Lifetimes = Record<SignedKind, number>;

/** Clock difference between replicas a token's expiry may carry beyond its kind's lifetime. */
export const CLOCK_SKEW_S = 60;

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

function mac(secret: Buffer, signed: string): Buffer {
  return createHmac('sha256', secret).update(signed, 'utf8').digest();
}

/**
 * `<prefix><base64url(JSON claims)>.<base64url(HMAC-SHA256(key, prefix + payload))>`. The prefix is
 * under the MAC, so a site token cannot pass as a portal session or the other way round. Verifying
 * needs only the key set in memory: no database round trip, any replica. A token whose expiry lies
 * further ahead than its kind's lifetime (plus CLOCK_SKEW_S) is refused whatever its signature: a
 * leaked signing key, or a bug in an issuer, cannot mint tokens that outlive the lifetime.
 */
export class SignedTokens {
  private readonly keyring: Keyring;
  private readonly lifetimes: Lifetimes;

  constructor(keyring: Keyring, lifetimes: Lifetimes) {
    this.keyring = keyring;
    this.lifetimes = lifetimes;
  }

  sign(kind: SignedKind, subject: { integrator_id: string; site_id: string; issuer?: string | null }, ttlSeconds: number, now = new Date()): { token: string; expires_at: Date; jti: string } {
    const key = this.keyring.signingKey();
    const exp = Math.floor(now.getTime() / 1000) + ttlSeconds;
    const claims: SignedClaims = {
      integrator_id: subject.integrator_id,
      site_id: subject.site_id,
      exp,
      kid: key.kid,
      jti: randomBytes(12).toString('base64url'),
      ...(subject.issuer ? { cti: subject.issuer } : {}),
    };
    const signed = TokenPrefix[kind] + b64(JSON.stringify(claims));
    return { token: `${signed}.${b64(mac(key.secret, signed))}`, expires_at: new Date(exp * 1000), jti: claims.jti };
  }

  async verify(kind: SignedKind, token: string, now = new Date()): Promise<VerifyResult> {
    const prefix = TokenPrefix[kind];
    if (!token.startsWith(prefix)) return { ok: false, reason: 'malformed' };
    const dot = token.lastIndexOf('.');
    if (dot <= prefix.length) return { ok: false, reason: 'malformed' };
    const signed = token.slice(0, dot);
    let claims: SignedClaims;
    try {
      claims = JSON.parse(Buffer.from(signed.slice(prefix.length), 'base64url').toString('utf8')) as SignedClaims;
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (!isClaims(claims)) return { ok: false, reason: 'malformed' };
    const key = await this.keyring.find(claims.kid);
    if (!key) return { ok: false, reason: 'signature' };
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = mac(key.secret, signed);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature' };
    if (claims.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
    if (claims.exp * 1000 > now.getTime() + (this.lifetimes[kind] + CLOCK_SKEW_S) * 1000) return { ok: false, reason: 'lifetime' };
    return { ok: true, claims };
  }
}

function isClaims(c: unknown): c is SignedClaims {
  if (typeof c !== 'object' || c === null) return false;
  const o = c as Record<string, unknown>;
  return (
    typeof o.integrator_id === 'string' &&
    typeof o.site_id === 'string' &&
    typeof o.kid === 'string' &&
    typeof o.jti === 'string' &&
    Number.isInteger(o.exp) &&
    (o.cti === undefined || typeof o.cti === 'string')
  );
}
