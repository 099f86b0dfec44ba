import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { sendError } from '@efs/http';
import { refusedRequests } from './refusedRequests.ts';
import type { TokenKindName } from '../auth/authenticate.ts';
import { rateLimitHeaders, type FixedWindowRateLimiter } from '../limits/rateLimiter.ts';

const kindName: Record<Principal['kind'], TokenKindName> = { CLIENT: 'client', SITE: 'site', PORTAL_SESSION: 'portalSession', UTILITY: 'utility', SYSTEM: 'client' };

/**
 * Counts one request against a key's limit and sets the RateLimit headers; when it is over, answers
 * 429 (with the error body) and returns false. The per-token hook below and the OpenADR face (whose
 * clients are known only once its own token lookup is done) both count through it.
 */
export function admitRequest(limiter: FixedWindowRateLimiter, key: string, limit: number, reply: FastifyReply, refused: () => void): boolean {
  const decision = limiter.hit(key, limit);
  reply.headers(rateLimitHeaders(decision));
  if (decision.allowed) return true;
  refused();
  sendError(reply, Errors.RATE_LIMITED(`Over this token's limit of ${decision.limit} requests per ${decision.windowSeconds} s; retry in ${decision.resetSeconds} s`));
  return false;
}

const rateLimit: FastifyPluginAsyncZod<{ limiter: FixedWindowRateLimiter; limits: Record<TokenKindName, number>; listener: string }> = async (app, { limiter, limits, listener }) => {
  const refused = refusedRequests(listener, 'rate_limit');
  // Callback form (it never waits): an async hook costs a promise per request. Answering, it calls no `done`.
  app.addHook('onRequest', (req, reply, done) => {
    const principal = req.principal;
    if (!principal) return done();
    if (admitRequest(limiter, `${principal.kind}:${principal.token_id}`, limits[kindName[principal.kind]], reply, refused)) done();
  });
};

/** Per-token limits of authenticated requests (429 with Retry-After); needs the principal the auth plugin sets. */
export const rateLimitPlugin = fp(rateLimit, { name: 'efs-rate-limit', dependencies: ['efs-auth'] });
