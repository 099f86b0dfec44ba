import type { FastifyRequest } from 'fastify';
import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { CredentialCache } from './credentialCache.ts';
import type { SignedTokens } from './signedTokens.ts';
import { kindOf, type TokenKind } from './tokens.ts';

/**
 * Which token kinds a route accepts; declared with every route. `client` = client token
 * (efs_ct_), `site` = site token (efs_st_), `portalSession` = a portal session (efs_ps_, started by
 * redeeming a single-use efs_ss_ token at the portal; a bearer token, never a cookie), `utility` =
 * utility API key (efs_uk_). On a route whose path has `:siteId`, a site token or portal session must be for
 * that site (else 403); a client token reaches only its own integrator's sites (the owning service
 * answers 404 for another's).
 */
export type TokenKindName = Exclude<TokenKind, 'sessionToken'>;
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
 * Whether the request carried a credential at all: a bearer (or malformed) Authorization header,
 * or the session token the portal redeems (in the link's query, or in the body the page posts).
 * A cookie is never a credential here: the embedded portal keeps its session in memory (it must
 * work in a cross-site iframe with third-party cookies blocked, decisions.md).
 */
export function credentialPresented(req: FastifyRequest): boolean {
  const given = (v: unknown) => typeof v === 'string' && v !== '';
  const token = (from: unknown) => (typeof from === 'object' && from !== null ? (from as Record<string, unknown>).token : undefined);
  return req.headers.authorization !== undefined || given(token(req.query)) || given(token(req.body));
}

/** The RFC 6750 challenge of a 401: the scheme, and `invalid_token` when a credential was refused. */
export const bearerChallenge = (presented: boolean): string => (presented ? 'Bearer error="invalid_token"' : 'Bearer');

const forbidden = (what: string) => Errors.FORBIDDEN(`${what} cannot be used on this endpoint`);

/**
 * Resolves the credential of a request to a principal allowed by the route's rule, reading only
 * memory (credential map, signing keys): 401 for a missing, malformed, unknown, expired or revoked
 * token; 403 for a valid token of a kind the route does not take, or for another site's token.
 */
export class Authenticator {
  private readonly credentials: CredentialCache;
  private readonly signed: SignedTokens;

  constructor(credentials: CredentialCache, signed: SignedTokens) {
    this.credentials = credentials;
    this.signed = signed;
  }

  /**
   * The request's principal. A client token or utility key is answered at once (memory only, no
   * promise per request); a site token or portal session once its signature is checked. Throws
   * (at once, or by rejecting) the 401 or 403.
   */
  authenticate(req: FastifyRequest, rule: AuthRule): Principal | Promise<Principal> {
    const presented = req.headers.authorization !== undefined;
    const token = bearerToken(req);
    if (!token) throw Errors.UNAUTHORIZED(presented ? 'Malformed Authorization header; expected "Bearer <token>"' : 'Missing bearer token');
    const principal = this.resolve(token, rule);
    return principal instanceof Promise ? principal.then((p) => forSiteOf(req, p)) : forSiteOf(req, principal);
  }

  private resolve(token: string, rule: AuthRule): Principal | Promise<Principal> {
    const kind = kindOf(token);
    switch (kind) {
      case 'client': {
        const rec = this.credentials.find('CLIENT_TOKEN', token);
        if (!rec) throw Errors.UNAUTHORIZED('Unknown client token');
        if (rec.revoked_at) throw Errors.UNAUTHORIZED('This client token has been revoked');
        if (!rule.accepts.includes('client')) throw forbidden('A client token');
        return { kind: 'CLIENT', integrator_id: rec.owner_id, utility_id: null, site_id: null, token_id: rec.id };
      }
      case 'utility': {
        const rec = this.credentials.find('UTILITY_KEY', token);
        if (!rec) throw Errors.UNAUTHORIZED('Unknown API key');
        if (rec.revoked_at) throw Errors.UNAUTHORIZED('This API key has been revoked');
        if (!rule.accepts.includes('utility')) throw forbidden('A utility API key');
        return { kind: 'UTILITY', integrator_id: null, utility_id: rec.owner_id, site_id: null, token_id: rec.id };
      }
      case 'site':
      case 'portalSession':
        return this.resolveSigned(kind, token, rule);
      case 'sessionToken':
        throw Errors.UNAUTHORIZED('A session token is redeemed once at {portal_url}/auth/session_token; it is not a bearer token');
      default:
        throw Errors.UNAUTHORIZED('Unknown token');
    }
  }

  private async resolveSigned(kind: 'site' | 'portalSession', token: string, rule: AuthRule): Promise<Principal> {
    const r = await this.signed.verify(kind, token);
    const what = kind === 'site' ? 'site token' : 'portal session';
    if (!r.ok) throw Errors.UNAUTHORIZED(r.reason === 'expired' ? `This ${what} has expired` : r.reason === 'lifetime' ? `This ${what} outlives the lifetime of its kind` : `Invalid ${what}`);
    if (r.claims.cti && this.credentials.isRevoked(r.claims.cti)) throw Errors.UNAUTHORIZED(`The client token that issued this ${what} has been revoked`);
    if (!rule.accepts.includes(kind)) throw forbidden(kind === 'site' ? 'A site token' : 'A portal session');
    return { kind: kind === 'site' ? 'SITE' : 'PORTAL_SESSION', integrator_id: r.claims.integrator_id, utility_id: null, site_id: r.claims.site_id, token_id: r.claims.jti };
  }
}

/** The principal, unless the route's path names another site than the one its token is for (403). */
function forSiteOf(req: FastifyRequest, principal: Principal): Principal {
  const siteId = (req.params as Record<string, string> | undefined)?.siteId;
  if (principal.site_id !== null && siteId !== undefined && principal.site_id !== siteId) {
    throw Errors.FORBIDDEN('This token is for another site');
  }
  return principal;
}
