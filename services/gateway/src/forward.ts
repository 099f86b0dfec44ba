import type { FastifyReply, FastifyRequest } from 'fastify';
import { siteKey, type Principal, type ReplyMessage } from '@efs/contracts';
import { AppError, Errors } from '@efs/errors';
import { send, type Transport } from '@efs/messaging';
import { routeSchema, type RouteDef } from './routes/route.ts';

/** Query parameters as sent (repeatable ones as arrays); the service parses them with the same schema. */
export function rawQuery(req: FastifyRequest): Record<string, string[]> {
  const i = req.raw.url?.indexOf('?') ?? -1;
  const out: Record<string, string[]> = {};
  if (i < 0) return out;
  for (const [k, v] of new URLSearchParams(req.raw.url!.slice(i + 1))) (out[k] ??= []).push(v);
  return out;
}

/**
 * The partitioning key of a request: one site's requests share a partition, so they are handled
 * in order; requests about no particular site spread over all partitions (an integrator-wide key
 * would serialise them).
 */
export function requestKey(principal: Principal, siteId: string | undefined): { key?: string } {
  const site = siteId ?? principal.site_id;
  return site ? { key: siteKey(principal.integrator_id ?? '', site) } : {};
}

/** Sends a service's reply as the HTTP answer; a 503 tells the caller when to retry, as every 503 does. */
export function relayReply(reply: FastifyReply, answer: ReplyMessage): FastifyReply {
  reply.code(answer.status).type('application/json; charset=utf-8');
  if (answer.status === 503) reply.header('retry-after', '1');
  return reply.send(answer.body ?? '');
}

/**
 * Why a reply breaks the route's declared responses (a status it does not declare, a body its
 * schema refuses), or undefined when it keeps them.
 */
export function replyDrift(route: RouteDef, answer: ReplyMessage): string | undefined {
  const schema = routeSchema(route).response[answer.status];
  if (!schema) return `status ${answer.status} is not among the declared responses`;
  let json: unknown;
  try {
    json = answer.body === null ? undefined : JSON.parse(answer.body);
  } catch {
    return `the body of the ${answer.status} reply is not JSON`;
  }
  const r = schema.safeParse(json);
  return r.success ? undefined : `the ${answer.status} reply does not match its schema: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
}

export interface ForwardOptions {
  timeoutMs: number;
  /** Check each reply against the route's declared responses (VALIDATE_REPLIES). */
  validateReplies: boolean;
}

/**
 * Turns an authenticated, validated HTTP request into a request message for the route's
 * operation and its reply into the HTTP answer. No reply before the deadline answers 503.
 */
export async function forward(route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply, transport: Transport, opts: ForwardOptions): Promise<FastifyReply> {
  const params = (req.params ?? {}) as Record<string, string>;
  try {
    const answer = await send(
      transport,
      route.operation,
      { principal, params, query: rawQuery(req), body: req.body === undefined || req.body === null ? null : JSON.stringify(req.body) },
      { timeoutMs: opts.timeoutMs, ...requestKey(principal, params.siteId) },
    );
    const drift = opts.validateReplies ? replyDrift(route, answer) : undefined;
    if (drift) {
      req.log.error({ op: route.operation.name, status: answer.status, drift }, 'reply breaks the declared responses');
      throw Errors.INTERNAL_ERROR(`${route.method} ${route.url}: ${drift}`);
    }
    return relayReply(reply, answer);
  } catch (err) {
    if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') req.log.warn({ target: route.operation.target, op: route.operation.name, reason: err.message }, 'service unavailable');
    throw err;
  }
}
