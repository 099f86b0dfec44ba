import { z } from 'zod';

/** The specification's error body, answered by every listener for every failure. */
export const ErrorBodySchema = z
  .object({
    code: z.string(),
    message: z.string(),
    status_code: z.number().int(),
    detail: z.array(z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() })),
    errors: z.array(z.object({ message: z.string(), path: z.string() })),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export interface ErrorExtra {
  detail?: ErrorBody['detail'];
  errors?: ErrorBody['errors'];
  cause?: unknown;
}

/** A failure with a stable code; domain code throws it, only an edge turns it into a response. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Whether trying the same thing again later may succeed (a consumer retries it; otherwise it dead-letters at once). */
  readonly retriable: boolean;
  readonly detail: ErrorBody['detail'];
  readonly errors: ErrorBody['errors'];

  /** Use the catalogue's factories (`Errors.NOT_FOUND(...)`); this is their constructor. */
  constructor(def: ErrorDef, message: string, extra: ErrorExtra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.code = def.code;
    this.status = def.status;
    this.retriable = def.retriable;
    this.detail = extra.detail ?? [];
    this.errors = extra.errors ?? [];
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status_code: this.status, detail: this.detail, errors: this.errors };
  }
}

export interface ErrorDef<C extends string = ErrorCode> {
  readonly code: C;
  readonly status: number;
  /** The message when nothing more specific is said. */
  readonly message: string;
  readonly retriable: boolean;
}

/** Makes an error of one catalogue entry: `Errors.NOT_FOUND('Site s1 not found')`. */
export interface ErrorFactory<C extends string = ErrorCode> extends ErrorDef<C> {
  (message?: string, extra?: ErrorExtra): AppError;
  /**
   * The error about one field of the input: `detail` and `errors` name it (`loc` [location, ...path],
   * `path` joined with "/"), typed as the code in lower case (`not_found`, `conflict`).
   */
  forField(message: string, path: readonly (string | number)[], location?: Location): AppError;
  /** The error about several fields, each with its own message. */
  forFields(message: string, fields: readonly { path: readonly (string | number)[]; msg: string }[], location?: Location): AppError;
}

type Location = 'body' | 'query' | 'path' | 'header';

/**
 * Declares one error of the catalogue (in the spirit of Fastify's `createError`): its stable code,
 * HTTP status, default message and whether it is retriable. By default only 5xx are, plus what
 * says "later" by nature (408, 429).
 */
export function createError<const C extends string>(code: C, status: number, message: string, opts: { retriable?: boolean } = {}): ErrorFactory<C> {
  const def: ErrorDef<C> = { code, status, message, retriable: opts.retriable ?? status >= 500 };
  const type = code.toLowerCase();
  // The catalogue below is the only caller, so C is always an ErrorCode.
  const make = (msg?: string, extra?: ErrorExtra) => new AppError(def as unknown as ErrorDef, msg ?? message, extra);
  const forFields: ErrorFactory<C>['forFields'] = (msg, fields, location = 'body') =>
    make(msg, {
      detail: fields.map((f) => ({ loc: [location, ...f.path.map(String)], msg: f.msg, type })),
      errors: fields.map((f) => ({ message: f.msg, path: f.path.join('/') })),
    });
  return Object.assign(make, def, { forFields, forField: (msg: string, path: readonly (string | number)[], location?: Location) => forFields(msg, [{ path, msg }], location) });
}

/** Every error any listener or service answers, with stable codes (decisions.md, Errors). */
export const Errors = {
  VALIDATION_ERROR: createError('VALIDATION_ERROR', 400, 'Invalid input'),
  UNAUTHORIZED: createError('UNAUTHORIZED', 401, 'Missing, invalid, expired or revoked token'),
  FORBIDDEN: createError('FORBIDDEN', 403, 'This token may not do that'),
  NOT_FOUND: createError('NOT_FOUND', 404, 'Not found'),
  METHOD_NOT_ALLOWED: createError('METHOD_NOT_ALLOWED', 405, 'Method not allowed'),
  REQUEST_TIMEOUT: createError('REQUEST_TIMEOUT', 408, 'The request was not received in time', { retriable: true }),
  CONFLICT: createError('CONFLICT', 409, 'Conflict'),
  MINIMUM_COMMITMENT_NOT_MET: createError('MINIMUM_COMMITMENT_NOT_MET', 409, 'The minimum commitment has not been met'),
  EVENT_NOT_MODIFIABLE: createError('EVENT_NOT_MODIFIABLE', 409, 'The event can no longer be changed'),
  PAYLOAD_TOO_LARGE: createError('PAYLOAD_TOO_LARGE', 413, 'Request body too large'),
  URI_TOO_LONG: createError('URI_TOO_LONG', 414, 'Request URL too long'),
  UNSUPPORTED_MEDIA_TYPE: createError('UNSUPPORTED_MEDIA_TYPE', 415, 'Content-Type must be application/json'),
  SITE_INFO_INCOMPLETE: createError('SITE_INFO_INCOMPLETE', 422, 'Site information is incomplete'),
  NOT_ELIGIBLE: createError('NOT_ELIGIBLE', 422, 'Not eligible for this program'),
  TERMS_NOT_ACCEPTED: createError('TERMS_NOT_ACCEPTED', 422, 'The current terms and conditions must be accepted'),
  RATE_LIMITED: createError('RATE_LIMITED', 429, 'Too many requests', { retriable: true }),
  HEADERS_TOO_LARGE: createError('HEADERS_TOO_LARGE', 431, 'Request header fields too large'),
  INTERNAL_ERROR: createError('INTERNAL_ERROR', 500, 'Internal error'),
  SERVICE_UNAVAILABLE: createError('SERVICE_UNAVAILABLE', 503, 'Service unavailable, retry later'),
} as const;

export type ErrorCode = keyof typeof Errors;

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(Errors, code);

/** A validation issue as zod reports it (`keys` of unknown fields, the `expected` type). */
export interface IssueLike {
  path: readonly PropertyKey[];
  message: string;
  code: string;
  keys?: readonly string[] | undefined;
  expected?: unknown;
}

/**
 * Issues in the API's words, one per field: zod reports unknown keys once, at the object that
 * holds them, and a body that is not an object as "expected object, received null".
 */
function perField(issues: readonly (z.core.$ZodIssue | IssueLike)[], location: Location): IssueLike[] {
  return issues.flatMap((i): IssueLike[] => {
    const keys = 'keys' in i ? i.keys : undefined;
    if (i.code === 'unrecognized_keys' && keys && keys.length > 0) return keys.map((k) => ({ path: [...i.path, k], message: 'Unknown field', code: i.code }));
    if (i.code === 'invalid_type' && location === 'body' && i.path.length === 0 && 'expected' in i && i.expected === 'object') return [{ path: [], message: 'a JSON object is required', code: i.code }];
    return [i];
  });
}

/** Turns zod issues into a VALIDATION_ERROR naming every bad field both ways the spec shows. */
export function validationError(given: readonly (z.core.$ZodIssue | IssueLike)[], location: Location): AppError {
  const issues = perField(given, location);
  const detail = issues.map((i) => ({ loc: [location, ...i.path.map(String)], msg: i.message, type: i.code }));
  const errors = issues.map((i) => ({ message: i.message, path: i.path.map(String).join('/') }));
  const first = issues[0];
  const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  return Errors.VALIDATION_ERROR(first ? `Invalid ${location}: ${where}${first.message}` : undefined, { detail, errors });
}

/** Socket errors of a dependency that is not there (restarting, unreachable): Node's `code`. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * Postgres SQLSTATEs of a server that is going away or not taking connections: class 08
 * (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now) and
 * 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/**
 * What node-postgres and knex say when the server went away, without a code of their own (knex
 * puts the statement in front of the driver's message).
 */
const UNAVAILABLE_MESSAGES = [/\bConnection terminated\b/, /\bClient has encountered a connection error and is not queryable\b/, /\bKnex: Timeout acquiring a connection\b/];

/**
 * Thrown where a dependency could not be reached and the client library's own error does not say
 * so in a way `isDependencyUnavailable` knows (the schema registry's client answers a refused
 * connection as a 400 response). Keeps the original as `cause`.
 */
export class DependencyUnavailableError extends Error {
  override name = 'DependencyUnavailableError';
}

/**
 * Whether an error says that a dependency (the database, the schema registry) cannot be reached
 * now, rather than anything about the request or message: an edge answers it 503 with
 * Retry-After, and a consumer waits for the dependency instead of dead-lettering the message.
 * Follows `cause` (a wrapped driver error).
 */
export function isDependencyUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (e instanceof DependencyUnavailableError) return true;
    // A catalogue error is an answer someone chose (SERVICE_UNAVAILABLE included), not a dependency's failure.
    if (e instanceof AppError) return false;
    if (e.name === 'KnexTimeoutError' || UNAVAILABLE_MESSAGES.some((m) => m.test(e.message))) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isDependencyUnavailable(x))) return true;
  }
  return false;
}

/**
 * Any thrown value as an error body; unknown errors never leak their message. A dependency that
 * cannot be reached is SERVICE_UNAVAILABLE (retry later), not an internal error.
 */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof AppError) return err.toBody();
  if (isDependencyUnavailable(err)) return Errors.SERVICE_UNAVAILABLE('A dependency of this service is unavailable; retry later').toBody();
  return Errors.INTERNAL_ERROR().toBody();
}

/**
 * An error body received from another service, as the AppError it was there (so an edge answers
 * it unchanged); a code outside the catalogue is an internal error.
 */
export function fromErrorBody(body: ErrorBody): AppError {
  if (!isErrorCode(body.code)) return Errors.INTERNAL_ERROR();
  return Errors[body.code](body.message, { detail: body.detail, errors: body.errors });
}

/**
 * Thrown by a consumer for a message that can never be processed (bad data, violated invariant):
 * it goes straight to the dead-letter topic instead of being retried.
 */
export class NonRetriableError extends Error {
  override name = 'NonRetriableError';
}

/**
 * Whether a failed message handler may succeed on another attempt. Not when it says so
 * (NonRetriableError), when it is a catalogue error that is not retriable (a 4xx: the message
 * itself is wrong), or when the message failed its schema (a ZodError): retrying those only delays
 * the dead letter. Anything else (a lost connection, a deadlock) is worth retrying.
 */
export function isRetriable(err: unknown): boolean {
  if (err instanceof NonRetriableError) return false;
  if (err instanceof AppError) return err.retriable;
  if (err instanceof z.core.$ZodError) return false;
  return true;
}
