import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@efs/contracts';
import type { Transport } from '@efs/messaging';
import type { SignedTokens } from '../auth/signedTokens.ts';
import type { RouteDef } from '../routes/route.ts';
import { relayReply } from '../forward.ts';
import { askService } from './askService.ts';

/**
 * `POST /v1/auth/site/{siteId}`: commissioning confirms the site is the integrator's (`sites.get`,
 * whose 404 is passed on as is), then a stateless site token is signed for it.
 */
export function siteTokenHandler(deps: { transport: Transport; timeoutMs: number; signed: SignedTokens; ttlSeconds: number }) {
  return async (route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const siteId = (req.params as { siteId: string }).siteId;
    const answer = await askService(route, principal, req, deps.transport, deps.timeoutMs);
    if (answer.status !== 200) return relayReply(reply, answer);
    const { token, expires_at } = deps.signed.sign('site', { integrator_id: principal.integrator_id!, site_id: siteId, issuer: principal.token_id }, deps.ttlSeconds);
    return reply.code(200).header('cache-control', 'no-store').send({ site_access_token: token, expires_at: expires_at.toISOString() });
  };
}
