import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Prefixes that make a leaked token recognisable (decisions.md, Tenancy and tokens). `sessionToken`
 * is the single-use token of POST /v1/sessions; redeeming it at the portal starts a portal session
 * whose credential (a bearer token the portal keeps in memory) is a signed `portalSession` token.
 * "Session" alone is never a token kind, so the two cannot be mistaken for each other.
 */
export const TokenPrefix = {
  client: 'efs_ct_',
  site: 'efs_st_',
  sessionToken: 'efs_ss_',
  portalSession: 'efs_ps_',
  utility: 'efs_uk_',
} as const;
export type TokenKind = keyof typeof TokenPrefix;

/** A new random token of a kind: 32 bytes of entropy, base64url, behind its prefix. */
export function newToken(kind: TokenKind): string {
  return TokenPrefix[kind] + randomBytes(32).toString('base64url');
}

/** Stored form of a secret token: only its SHA-256 (a token has full entropy, so no salt or KDF is needed). */
export function hashToken(token: string): string {
  // One-shot: no Hash object per call (this runs on every authenticated request).
  return hash('sha256', token, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const prefixes = Object.entries(TokenPrefix) as [TokenKind, string][];

export function kindOf(token: string): TokenKind | undefined {
  for (const [kind, prefix] of prefixes) if (token.startsWith(prefix)) return kind;
  return undefined;
}
