import type { FastifyReply, FastifyRequest } from 'fastify';
import { siteKey, type Principal, type ReplyMessage } from '@efs/contracts';
import { AppError, Errors } from '@efs/errors';
import { send, type Transport } from '@efs/messaging';
import { principalOf } from './plugins/auth.ts';
import { routeSchema, type RouteDef, type RouteDeps, type RouteHandler } from './routes/route.ts';

/**
 * Query parameters as sent (repeatable ones as arrays); the service parses them with the same
 * schema. A map without a prototype: a parameter may be called `constructor` or `toString`.
 */
export function rawQuery(req: FastifyRequest): Record<string, string[]> {
  const i = req.raw.url?.indexOf('?') ?? -1;
  const out = Object.create(null) as Record<string, string[]>;
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

/**
 * How long the gateway keeps listening for the answer of a keyed request (Idempotency-Key)
 * after it answered 503: an answer that comes is kept for the retry instead of being lost.
 */
export const LATE_ANSWER_WAIT_MS = 30_000;

export interface ForwardOptions {
  /** The request's deadline, from now: the service does nothing after it. */
  timeoutMs: number;
  /** How much longer the gateway waits for the answer of work committed just before the deadline. */
  graceMs: number;
  /** Check each reply against the route's declared responses (VALIDATE_REPLIES). */
  validateReplies: boolean;
}

/**
 * Waits for the answer of a keyed request until the deadline and grace have passed, then answers
 * 503 while still listening (LATE_ANSWER_WAIT_MS) for what the service says, which the
 * idempotency plugin keeps for the retry.
 */
async function sendKeyed(req: FastifyRequest, transport: Transport, route: RouteDef, message: Parameters<typeof send>[2], opts: ForwardOptions, key: { key?: string }): Promise<ReplyMessage> {
  const answer = send(transport, route.operation, message, { timeoutMs: opts.timeoutMs, graceMs: opts.graceMs + LATE_ANSWER_WAIT_MS, ...key });
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'gave-up'>((resolve) => (timer = setTimeout(() => resolve('gave-up'), opts.timeoutMs + opts.graceMs)));
  try {
    const first = await Promise.race([answer, gaveUp]);
    if (first !== 'gave-up') return first;
  } finally {
    clearTimeout(timer);
  }
  if (req.idempotency) req.idempotency.late = answer.then((a) => a, () => undefined);
  else answer.catch(() => undefined);
  throw Errors.SERVICE_UNAVAILABLE(`The ${route.operation.target} service did not answer in time; retry later`);
}

/**
 * Turns an authenticated, validated HTTP request into a request message for the route's
 * operation and its reply into the HTTP answer. No reply by the deadline and its grace answers
 * 503, and then nothing was done: the service commits nothing after the deadline, and the grace
 * lets the answer of what it committed just before arrive.
 */
export async function forward(route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply, transport: Transport, opts: ForwardOptions): Promise<FastifyReply> {
  const params = (req.params ?? {}) as Record<string, string>;
  try {
    const message = { principal, params, query: rawQuery(req), body: req.body === undefined || req.body === null ? null : JSON.stringify(req.body) };
    const key = requestKey(principal, params.siteId);
    const answer = req.idempotency
      ? await sendKeyed(req, transport, route, message, opts, key)
      : await send(transport, route.operation, message, { timeoutMs: opts.timeoutMs, graceMs: opts.graceMs, ...key });
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

/** The handler of a route on any listener: its own when the gateway answers it, else forwarding to its operation. */
export function routeHandler(route: RouteDef, deps: RouteDeps): RouteHandler {
  return route.handler?.(deps) ?? ((req, reply) => forward(route, principalOf(req), req, reply, deps.transport, deps));
}
