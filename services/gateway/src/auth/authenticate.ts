import type { FastifyRequest } from 'fastify';
import type { Principal } from '@efs/contracts';
import { AppError } from '@efs/errors';
import type { CredentialStore } from './credentialStore.ts';
import { kindOf } from './tokens.ts';

/**
 * Which token kinds a route accepts; declared with every route. On a route whose path has
 * `:siteId`, a site or portal-session token must be for that site (else 403); a client token
 * reaches only its own integrator's sites (the owning service answers 404 for another's).
 */
export type TokenKindName = 'client' | 'site' | 'session' | 'utility';
export interface AuthRule {
  accepts: readonly TokenKindName[];
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/**
 * Resolves the bearer token of a request to a principal allowed by the route's rule: 401 for a
 * missing, unknown or revoked token, 403 for a valid token of a kind the route does not take.
 */
export async function authenticate(req: FastifyRequest, rule: AuthRule, store: CredentialStore): Promise<Principal> {
  const token = bearerToken(req);
  if (!token) throw new AppError('UNAUTHORIZED', 'Missing bearer token');
  const kind = kindOf(token);
  if (kind === 'client') {
    const rec = await store.findClientToken(token);
    if (!rec || rec.revoked_at) throw new AppError('UNAUTHORIZED', 'Unknown or revoked client token');
    if (!rule.accepts.includes('client')) throw new AppError('FORBIDDEN', 'A client token cannot be used here');
    return { kind: 'CLIENT', integrator_id: rec.integrator_id, utility_id: null, site_id: null, token_id: rec.id };
  }
  if (kind === 'utility') {
    const rec = await store.findUtilityKey(token);
    if (!rec || rec.revoked_at) throw new AppError('UNAUTHORIZED', 'Unknown or revoked API key');
    if (!rule.accepts.includes('utility')) throw new AppError('FORBIDDEN', 'A utility API key cannot be used here');
    return { kind: 'UTILITY', integrator_id: null, utility_id: rec.utility_id, site_id: null, token_id: rec.id };
  }
  throw new AppError('UNAUTHORIZED', 'Unknown token');
}
