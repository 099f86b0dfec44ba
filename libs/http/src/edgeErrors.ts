import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError } from 'fastify';
import { Errors, type AppError, type ErrorCode } from '@efs/errors';

/** Longest request target (path and query) a listener takes; longer answers 414. */
export const MAX_URL_LENGTH = 8 * 1024;
/** Longest path segment the router matches; a route's own schema bounds its ids well below this (400). */
export const MAX_PARAM_LENGTH = 1024;

/**
 * Node's own HTTP server options for a listener: the whole-request timeout (408) checked often
 * enough to fire when configured (Node checks every 30 s by default, so a 30 s timeout fired
 * after 30–60 s), headers under the same deadline, and no bodiless 400 for a missing Host
 * (answered by `missingHostError` with the error body instead).
 */
export function serverTimeouts(requestTimeoutMs: number) {
  return {
    requestTimeout: requestTimeoutMs,
    // The socket's idle limit must not cut a slow request before its 408 is written.
    connectionTimeout: Math.max(60_000, requestTimeoutMs + 5_000),
    http: {
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(requestTimeoutMs / 4))),
      requireHostHeader: false,
    },
  };
}

/** What Fastify's router reports before any route or hook runs (the `frameworkErrors` option). */
export function frameworkError(err: FastifyError): AppError {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return Errors.VALIDATION_ERROR.forField('The URL is not valid percent-encoding', [], 'path');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return Errors.URI_TOO_LONG(`A path segment is longer than ${MAX_PARAM_LENGTH} characters`);
    default:
      return Errors.INTERNAL_ERROR();
  }
}

/** A request line too long, or HTTP/1.1 without Host (RFC 9112 §3.2: 400), refused before routing. */
export function requestLineError(req: { url: string; httpVersion?: string; headers: Record<string, unknown> }): AppError | undefined {
  if (req.url.length > MAX_URL_LENGTH) return Errors.URI_TOO_LONG(`The URL is longer than ${MAX_URL_LENGTH} characters`);
  if (req.httpVersion === '1.1' && req.headers.host === undefined) return Errors.VALIDATION_ERROR.forField('The Host header is required', ['host'], 'header');
  return undefined;
}

/** The catalogue code for a status Fastify (or a plugin) set on an error this layer has no rule for. */
const byStatus: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
};

/** A 4xx error without a rule of its own: the catalogue's code for its status and message (never the framework's text). */
export function statusError(status: number | undefined): AppError | undefined {
  if (status === undefined || status < 400 || status >= 500) return undefined;
  return Errors[byStatus[status] ?? 'VALIDATION_ERROR']();
}

/**
 * What a client error at the socket (before Fastify sees a request) answers: a timeout 408, an
 * over-long request line 414, too many header bytes 431, anything else malformed 400.
 */
export function clientErrorAnswer(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): AppError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return Errors.REQUEST_TIMEOUT();
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // The header limit counts the request line too: a line with no end in sight is a long URL.
    const packet = err.rawPacket;
    const lineEnd = packet ? packet.indexOf('\r\n') : -1;
    if (packet && (lineEnd < 0 || lineEnd > MAX_URL_LENGTH)) return Errors.URI_TOO_LONG(`The URL is longer than ${MAX_URL_LENGTH} characters`);
    return Errors.HEADERS_TOO_LARGE();
  }
  return Errors.VALIDATION_ERROR('Malformed HTTP request');
}

/**
 * `Expect` values other than 100-continue: Node would answer a bodiless 417. RFC 9110 §10.1.1
 * lets a server ignore the expectation, so the request is served as if it had none.
 */
export function ignoreExpectation(server: { on(event: 'checkExpectation', l: (req: IncomingMessage, res: ServerResponse) => void): unknown; emit(event: 'request', req: IncomingMessage, res: ServerResponse): boolean }): void {
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
}
