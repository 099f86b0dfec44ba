import type { z } from 'zod';
import type { Principal, ReplyMessage, RequestMessage } from '@efs/contracts';
import { AppError, toErrorBody, validationError } from '@efs/errors';
import type { Logger } from '@efs/logging';
import type { MessageMeta, RequestHandler } from './transport.ts';

/** What an operation handler gets: the parsed request plus who asked. */
export interface OperationInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  principal: Principal;
  meta: MessageMeta;
}

export interface Operation<B = unknown, Q = unknown, P = unknown> {
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  handle(input: OperationInput<B, Q, P>): Promise<{ status?: number; body: unknown }>;
}

/** Declares an operation with the schemas that type its handler. */
export function operation<B = undefined, Q = undefined, P = undefined>(op: Operation<B, Q, P>): Operation<B, Q, P> {
  return op;
}

/**
 * The edge of a service: picks the handler by operation name, parses the request with the
 * operation's schemas (the gateway validated it already; a service trusts no one), and turns
 * thrown AppErrors into error replies. Unknown errors are logged and answered 500.
 */
export function operationRouter(ops: Record<string, Operation<any, any, any>>, logger: Logger): RequestHandler {
  return async (request: RequestMessage, meta: MessageMeta): Promise<ReplyMessage> => {
    const op = ops[request.op];
    if (!op) return errorReply(new AppError('NOT_FOUND', `Unknown operation ${request.op}`));
    try {
      const body = parse(op.body, request.body === null ? undefined : (JSON.parse(request.body) as unknown), 'body');
      const query = parse(op.query, flattenQuery(request.query), 'query');
      const params = parse(op.params, request.params, 'path');
      const result = await op.handle({ body, query, params, principal: request.principal, meta });
      return { status: result.status ?? 200, body: JSON.stringify(result.body) };
    } catch (err) {
      if (!(err instanceof AppError)) logger.error({ err, op: request.op }, 'operation failed');
      return errorReply(err);
    }
  };
}

export function errorReply(err: unknown): ReplyMessage {
  const body = toErrorBody(err);
  return { status: body.status_code, body: JSON.stringify(body) };
}

function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, location: 'body' | 'query' | 'path'): T {
  if (!schema) return value as T;
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error.issues, location);
  return r.data;
}

/** Query values travel as arrays (repeatable parameters); single ones are unwrapped. */
function flattenQuery(q: Record<string, string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(q)) out[k] = v.length === 1 ? v[0]! : v;
  return out;
}
