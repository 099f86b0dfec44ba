import { requestDeadline, type OperationArgOf, type OperationDef, type OperationResponse, type Principal, type ReplyMessage, type RequestMessage } from '@efs/contracts';
import { ErrorBodySchema, Errors, fromErrorBody } from '@efs/errors';
import { ServiceUnavailableError, type RequestOptions, type Transport } from './transport.ts';

type Part<K extends 'params' | 'query' | 'body', O> = OperationArgOf<O, K> extends undefined ? { [P in K]?: undefined } : { [P in K]: OperationArgOf<O, K> };

/** What a caller passes to an operation: who asks, and the params, query and body its schemas take. */
export type CallInput<O extends OperationDef> = { principal: Principal } & Part<'params', O> & Part<'query', O> & Part<'body', O>;

/** A query as it travels: every value a list of strings (repeatable parameters). */
function toWireQuery(query: unknown): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    out[k] = (Array.isArray(v) ? v : [v]).map(String);
  }
  return out;
}

/**
 * Sends a request message for an operation and waits for the raw reply. No reply by the
 * deadline is the 503 SERVICE_UNAVAILABLE every caller answers in that case. Inside a request
 * (a service asking another while it answers), the inner request gets no later a deadline than
 * the outer one: nothing it does outlives the caller's wait.
 */
export async function send(transport: Transport, op: OperationDef, request: Omit<RequestMessage, 'op'>, opts: RequestOptions): Promise<ReplyMessage> {
  const outer = requestDeadline();
  const timeoutMs = outer === undefined ? opts.timeoutMs : Math.min(opts.timeoutMs, outer - Date.now());
  if (timeoutMs <= 0) throw Errors.SERVICE_UNAVAILABLE(`No time was left to ask the ${op.target} service; retry later`);
  try {
    return await transport.request(op.target, { op: op.name, ...request }, { ...opts, timeoutMs });
  } catch (err) {
    if (err instanceof ServiceUnavailableError) throw Errors.SERVICE_UNAVAILABLE(`The ${op.target} service did not answer in time; retry later`, { cause: err });
    throw err;
  }
}

/**
 * A reply as the operation's contract says it: its response (parsed with the operation's schema)
 * for a 2xx, the AppError it answered otherwise. A reply that breaks the contract is an
 * INTERNAL_ERROR (the other service has a bug), never passed on as if it were fine.
 */
export function readReply<O extends OperationDef>(op: O, reply: ReplyMessage): OperationResponse<O> {
  let json: unknown;
  try {
    json = reply.body === null ? undefined : JSON.parse(reply.body);
  } catch (cause) {
    throw Errors.INTERNAL_ERROR(undefined, { cause });
  }
  if (reply.status >= 200 && reply.status < 300) {
    const r = op.response.safeParse(json);
    if (!r.success) throw Errors.INTERNAL_ERROR(undefined, { cause: new Error(`${op.target} answered ${op.name} otherwise than its contract: ${r.error.message}`) });
    return r.data as OperationResponse<O>;
  }
  const body = ErrorBodySchema.safeParse(json);
  if (!body.success) throw Errors.INTERNAL_ERROR(undefined, { cause: new Error(`${op.target} answered ${op.name} with ${reply.status} and no error body`) });
  throw fromErrorBody(body.data);
}

/**
 * Calls a catalogue operation of another service: the typed client every caller uses instead of
 * building a request and parsing its reply by hand. Resolves to the operation's response; rejects
 * with the AppError the service answered (so an edge passes it on unchanged), 503 when it did not
 * answer in time.
 */
export async function call<O extends OperationDef>(transport: Transport, op: O, input: CallInput<O>, opts: RequestOptions): Promise<OperationResponse<O>> {
  const reply = await send(
    transport,
    op,
    {
      principal: input.principal,
      params: (input.params ?? {}) as Record<string, string>,
      query: toWireQuery(input.query),
      body: input.body === undefined ? null : JSON.stringify(input.body),
    },
    opts,
  );
  return readReply(op, reply);
}
