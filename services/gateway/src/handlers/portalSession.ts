import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '@efs/errors';
import { PORTAL_SESSION_COOKIE } from '../auth/authenticate.ts';
import type { CredentialCache } from '../auth/credentialCache.ts';
import type { KnexSessionTokenStore } from '../auth/sessionTokens.ts';
import type { SignedTokens } from '../auth/signedTokens.ts';
import { kindOf } from '../auth/tokens.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `GET {portal_url}/auth/session_token?token=`: redeems a single-use session token (once, within
 * its 10 minutes) and starts a portal session bound to its site: a signed `efs_ps_` credential in
 * an HttpOnly, SameSite=None cookie (Secure over https), so the portal works inside an iframe.
 * The portal itself is a later issue; this answers a small page for the site.
 */
export function portalSessionHandler(deps: { sessions: KnexSessionTokenStore; signed: SignedTokens; credentials: CredentialCache; ttlSeconds: number; secure: (req: FastifyRequest) => boolean }) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || token === '') throw new AppError('UNAUTHORIZED', 'Missing session token (query parameter token)');
    if (kindOf(token) !== 'session') throw new AppError('UNAUTHORIZED', 'Not a portal session token');
    const redeemed = await deps.sessions.redeem(token);
    if (!redeemed) throw new AppError('UNAUTHORIZED', 'Unknown, expired or already used session token');
    if (redeemed.issuer && deps.credentials.isRevoked(redeemed.issuer)) throw new AppError('UNAUTHORIZED', 'The client token that issued this session token has been revoked');
    const session = deps.signed.sign('portal', redeemed, deps.ttlSeconds);
    const cookie = [
      `${PORTAL_SESSION_COOKIE}=${session.token}`,
      'Path=/',
      `Max-Age=${deps.ttlSeconds}`,
      'HttpOnly',
      'SameSite=None',
      ...(deps.secure(req) ? ['Secure'] : []),
    ].join('; ');
    const site = escapeHtml(redeemed.site_id);
    return reply
      .code(200)
      .header('set-cookie', cookie)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Energy flexibility</title></head>` +
          `<body><main data-site-id="${site}"><h1>Energy flexibility programs</h1><p>Your session for site <strong>${site}</strong> has started.</p></main></body></html>`,
      );
  };
}
