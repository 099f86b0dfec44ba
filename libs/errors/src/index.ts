import type { z } from 'zod';

/** The specification's error body, answered by every listener for every failure. */
export interface ErrorBody {
  code: string;
  message: string;
  status_code: number;
  detail: { loc: string[]; msg: string; type: string }[];
  errors: { message: string; path: string }[];
}

/** Stable error codes and their HTTP statuses (decisions.md, Errors). */
export const ErrorCatalogue = {
  VALIDATION_ERROR: { status: 400, message: 'Invalid input' },
  UNAUTHORIZED: { status: 401, message: 'Missing, invalid, expired or revoked token' },
  FORBIDDEN: { status: 403, message: 'This token may not do that' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time' },
  CONFLICT: { status: 409, message: 'Conflict' },
  MINIMUM_COMMITMENT_NOT_MET: { status: 409, message: 'The minimum commitment has not been met' },
  EVENT_NOT_MODIFIABLE: { status: 409, message: 'The event can no longer be changed' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  SITE_INFO_INCOMPLETE: { status: 422, message: 'Site information is incomplete' },
  NOT_ELIGIBLE: { status: 422, message: 'Not eligible for this program' },
  TERMS_NOT_ACCEPTED: { status: 422, message: 'The current terms and conditions must be accepted' },
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request header fields too large' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service unavailable, retry later' },
} as const;

export type ErrorCode = keyof typeof ErrorCatalogue;

/** A failure with a stable code; domain code throws it, only an edge turns it into a response. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: ErrorBody['detail'];
  readonly errors: ErrorBody['errors'];

  constructor(code: ErrorCode, message?: string, opts: { detail?: ErrorBody['detail']; errors?: ErrorBody['errors']; cause?: unknown } = {}) {
    super(message ?? ErrorCatalogue[code].message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.status = ErrorCatalogue[code].status;
    this.detail = opts.detail ?? [];
    this.errors = opts.errors ?? [];
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status_code: this.status, detail: this.detail, errors: this.errors };
  }
}

export function errorBody(code: ErrorCode, message?: string, extra: Partial<Pick<ErrorBody, 'detail' | 'errors'>> = {}): ErrorBody {
  return new AppError(code, message, extra).toBody();
}

/** Turns zod issues into a VALIDATION_ERROR naming every bad field both ways the spec shows. */
export interface IssueLike {
  path: readonly PropertyKey[];
  message: string;
  code: string;
}

export function validationError(issues: readonly (z.core.$ZodIssue | IssueLike)[], location: 'body' | 'query' | 'path' | 'header'): AppError {
  const detail = issues.map((i) => ({ loc: [location, ...i.path.map(String)], msg: i.message, type: i.code }));
  const errors = issues.map((i) => ({ message: i.message, path: i.path.map(String).join('/') }));
  const first = issues[0];
  const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  return new AppError('VALIDATION_ERROR', first ? `Invalid ${location}: ${where}${first.message}` : undefined, { detail, errors });
}

/** Any thrown value as an error body; unknown errors never leak their message. */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof AppError) return err.toBody();
  return errorBody('INTERNAL_ERROR');
}
