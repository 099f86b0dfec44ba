import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@efs/contracts';
import type { Transport } from '@efs/messaging';
import type { KnexSessionTokenStore } from '../auth/sessionTokens.ts';
import type { RouteDef } from '../routes/route.ts';
import { relayReply } from '../forward.ts';
import { askService } from './askService.ts';

/**
 * `POST /v1/sessions`: commissioning commissions the site if it is new or reuses it
 * (`sites.ensure`, whose errors are passed on as they are), then a single-use session token for
 * that site is stored (hashed) and answered with the portal address that redeems it.
 */
export function sessionHandler(deps: { transport: Transport; timeoutMs: number; sessions: KnexSessionTokenStore; ttlSeconds: number; portalUrl: () => string; redeemPath: string }) {
  return async (route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const siteId = (req.body as { site: { id: string } }).site.id;
    const answer = await askService(route, principal, req, deps.transport, deps.timeoutMs);
    if (answer.status < 200 || answer.status > 299) return relayReply(reply, answer);
    const { token, expires_at } = await deps.sessions.create({ integrator_id: principal.integrator_id!, site_id: siteId, issuer: principal.token_id }, deps.ttlSeconds);
    const portal_url = `${deps.portalUrl().replace(/\/+$/, '')}${deps.redeemPath}?token=${encodeURIComponent(token)}`;
    return reply.code(200).header('cache-control', 'no-store').send({ token, expires_at: expires_at.toISOString(), portal_url });
  };
}
