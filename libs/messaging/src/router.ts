import type { z } from 'zod';
import { Headers, deadlinePassed, withRequestDeadline, type OperationCatalogue, type OperationDef, type OperationInputOf, type OperationResponseIn, type Principal, type ReplyMessage, type RequestMessage } from '@efs/contracts';
import { AppError, Errors, isDependencyUnavailable, toErrorBody, validationError } from '@efs/errors';
import type { Logger } from '@efs/logging';
import type { MessageMeta, RequestHandler } from './transport.ts';

/** What an operation's handler gets: the request parsed with the operation's schemas, plus who asked. */
export interface OperationInput<O extends OperationDef> {
  params: OperationInputOf<O, 'params'>;
  query: OperationInputOf<O, 'query'>;
  body: OperationInputOf<O, 'body'>;
  principal: Principal;
  meta: MessageMeta;
}

/**
 * A reply body serialized ahead of time, for a handler that answers the same body again and
 * again (a read of data that changes rarely): it keeps the text instead of serializing per request.
 */
export class JsonReply<O extends OperationDef> {
  readonly json: string;
  /** Ties the text to its operation's response type. */
  declare readonly operation?: O;

  private constructor(json: string) {
    this.json = json;
  }

  /** The operation's answer, serialized now. */
  static of<O extends OperationDef>(_operation: O, body: OperationResponseIn<O>): JsonReply<O> {
    return new JsonReply<O>(JSON.stringify(body));
  }

  /**
   * An array answer made of its elements' JSON texts (each `JSON.stringify` of one element of the
   * operation's response), for a handler that keeps the text of each item rather than of each
   * answer: memory stays one text per item however many different questions select them.
   */
  static ofElements<O extends OperationDef>(_operation: O, texts: readonly string[]): JsonReply<O> {
    return new JsonReply<O>(`[${texts.join(',')}]`);
  }
}

/** A catalogue operation and the function that answers it (its reply body, or a thrown AppError). */
export interface OperationHandler<O extends OperationDef> {
  readonly operation: O;
  handle(input: OperationInput<O>): Promise<OperationResponseIn<O> | JsonReply<O>>;
}

/**
 * One handler per operation of a catalogue. A service declares its map with
 * `satisfies HandlerMap<typeof XOperations>`: a missing, misspelled or mismatched operation does
 * not compile.
 */
export type HandlerMap<C extends OperationCatalogue> = { readonly [K in keyof C]: OperationHandler<C[K]> };

/**
 * A service's handler map from the handlers' factories, each given the service's context:
 * `bindHandlers(XOperations, ctx, { createX, listX })`. Each factory takes only the part of the
 * context it uses (a `Pick` of it); a missing, misspelled or mismatched operation, or a factory
 * that needs what the context does not hold, does not compile.
 */
export function bindHandlers<C extends OperationCatalogue, Ctx>(_catalogue: C, ctx: Ctx, factories: { readonly [K in keyof C]: (ctx: Ctx) => OperationHandler<C[K]> }): HandlerMap<C> {
  const handlers: Partial<Record<keyof C, OperationHandler<OperationDef>>> = {};
  for (const name of Object.keys(factories) as (keyof C)[]) handlers[name] = factories[name](ctx);
  return handlers as HandlerMap<C>;
}

/** Implements a catalogue operation; the handler's input and reply are typed by the operation's schemas. */
export function implement<O extends OperationDef>(operation: O, handle: (input: OperationInput<O>) => Promise<OperationResponseIn<O> | JsonReply<O>>): OperationHandler<O> {
  return { operation, handle };
}

/**
 * The edge of a service: picks the handler by operation name, parses the request with the
 * operation's schemas (the gateway validated it already; a service trusts no one), and turns
 * thrown AppErrors into error replies. A dependency that cannot be reached (the database
 * restarting) answers 503; other errors are logged and answered 500. A request past its deadline
 * is answered 503 without running its handler (its caller has given up on it); the handler runs
 * with the request's deadline as the current one (see withRequestDeadline).
 */
export function operationRouter<C extends OperationCatalogue>(catalogue: C, handlers: { readonly [K in keyof C]?: OperationHandler<C[K]> }, logger: Logger): RequestHandler {
  for (const [name, h] of Object.entries(handlers) as [string, OperationHandler<OperationDef> | undefined][]) {
    if (h && h.operation !== catalogue[name]) throw new Error(`handler of ${name} implements ${h.operation.name}`);
  }
  return async (request: RequestMessage, meta: MessageMeta): Promise<ReplyMessage> => {
    const handler = Object.hasOwn(handlers, request.op) ? (handlers[request.op] as OperationHandler<OperationDef> | undefined) : undefined;
    if (!handler) return errorReply(Errors.NOT_FOUND(`Unknown operation ${request.op}`));
    if (deadlinePassed(meta.headers[Headers.deadline])) return expiredReply();
    const deadline = Number(meta.headers[Headers.deadline] ?? 0);
    const op = handler.operation;
    try {
      const body = parse(op.body, request.body === null ? undefined : (JSON.parse(request.body) as unknown), 'body');
      const query = parse(op.query, flattenQuery(request.query), 'query');
      const params = parse(op.params, request.params, 'path');
      const input = { body, query, params, principal: request.principal, meta } as OperationInput<OperationDef>;
      const result = deadline > 0 ? await withRequestDeadline(deadline, () => handler.handle(input)) : await handler.handle(input);
      return { status: 200, body: result instanceof JsonReply ? result.json : JSON.stringify(result) };
    } catch (err) {
      if (isDependencyUnavailable(err)) logger.warn({ err, op: request.op }, 'a dependency is unavailable; operation answered SERVICE_UNAVAILABLE');
      else if (!(err instanceof AppError)) logger.error({ err, op: request.op }, 'operation failed');
      else if (err.status >= 500) logger.warn({ err, op: request.op }, `operation answered ${err.code}`);
      return errorReply(err);
    }
  };
}

/** The answer to a request that arrived past its deadline: nothing was done. */
export function expiredReply(): ReplyMessage {
  return errorReply(Errors.SERVICE_UNAVAILABLE('The request arrived after its deadline and was not handled; nothing was done, retry later'));
}

/** The handler's reply to a request; a handler that throws answers the error (logged), as both transports do. */
export async function replyOf(handler: RequestHandler, request: RequestMessage, meta: MessageMeta, logger: Logger): Promise<ReplyMessage> {
  try {
    return await handler(request, meta);
  } catch (err) {
    logger.error({ err, op: request.op }, 'request handler failed');
    return errorReply(err);
  }
}

/** A thrown error as a reply: a catalogue error as its body, an unreachable dependency as 503, anything else as 500 INTERNAL_ERROR. */
export function errorReply(err: unknown): ReplyMessage {
  const body = toErrorBody(err);
  return { status: body.status_code, body: JSON.stringify(body) };
}

function parse(schema: z.ZodType | undefined, value: unknown, location: 'body' | 'query' | 'path'): unknown {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error.issues, location);
  return r.data;
}

/** Query values travel as arrays (repeatable parameters); single ones are unwrapped. */
function flattenQuery(q: Record<string, string[]>): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of Object.entries(q)) out[k] = v.length === 1 ? v[0]! : v;
  return out;
}
