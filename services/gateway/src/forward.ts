import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, ReplyMessage, RequestMessage } from '@efs/contracts';
import { errorBody } from '@efs/errors';
import { sendError } from '@efs/http';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';
import type { RouteDef } from './routes/route.ts';

/** Query parameters as sent (repeatable ones as arrays); the service parses them with the same schema. */
export function rawQuery(req: FastifyRequest): Record<string, string[]> {
  const i = req.raw.url?.indexOf('?') ?? -1;
  const out: Record<string, string[]> = {};
  if (i < 0) return out;
  for (const [k, v] of new URLSearchParams(req.raw.url!.slice(i + 1))) (out[k] ??= []).push(v);
  return out;
}

/** Sends a service's reply as the HTTP answer; a 503 tells the caller when to retry, as every 503 does. */
export function relayReply(reply: FastifyReply, answer: ReplyMessage): FastifyReply {
  reply.code(answer.status).type('application/json; charset=utf-8');
  if (answer.status === 503) reply.header('retry-after', '1');
  return reply.send(answer.body ?? '');
}

/**
 * Turns an authenticated, validated HTTP request into a request message for the route's
 * service and its reply into the HTTP answer. No reply before the deadline answers 503.
 */
export async function forward(route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply, transport: Transport, timeoutMs: number): Promise<FastifyReply> {
  const params = (req.params ?? {}) as Record<string, string>;
  const message: RequestMessage = {
    op: route.op,
    principal,
    params,
    query: rawQuery(req),
    body: req.body === undefined || req.body === null ? null : JSON.stringify(req.body),
  };
  try {
    // One site's requests share a partition, so they are handled in order; requests about no
    // particular site spread over all partitions (an integrator-wide key would serialise them).
    const siteKey = params.siteId ?? principal.site_id;
    const answer = await transport.request(route.target, message, { timeoutMs, ...(siteKey ? { key: `${principal.integrator_id ?? ''}/${siteKey}` } : {}) });
    return relayReply(reply, answer);
  } catch (err) {
    if (err instanceof ServiceUnavailableError) {
      req.log.warn({ target: route.target, op: route.op, reason: err.message }, 'service unavailable');
      return sendError(reply, errorBody('SERVICE_UNAVAILABLE', `The ${route.target} service did not answer in time; retry later`), { 'retry-after': '1' });
    }
    throw err;
  }
}
