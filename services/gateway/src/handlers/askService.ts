import type { FastifyRequest } from 'fastify';
import type { Principal, ReplyMessage } from '@efs/contracts';
import { AppError } from '@efs/errors';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';
import type { RouteDef } from '../routes/route.ts';

/** Asks the route's service its operation (as forward() does) and returns the raw reply; no answer in time is 503. */
export async function askService(route: RouteDef, principal: Principal, req: FastifyRequest, transport: Transport, timeoutMs: number): Promise<ReplyMessage> {
  const params = (req.params ?? {}) as Record<string, string>;
  try {
    return await transport.request(
      route.target,
      { op: route.op, principal, params, query: {}, body: req.body === undefined || req.body === null ? null : JSON.stringify(req.body) },
      { timeoutMs, ...(params.siteId ? { key: `${principal.integrator_id ?? ''}/${params.siteId}` } : {}) },
    );
  } catch (err) {
    if (err instanceof ServiceUnavailableError) throw new AppError('SERVICE_UNAVAILABLE', `The ${route.target} service did not answer in time; retry later`, { cause: err });
    throw err;
  }
}
