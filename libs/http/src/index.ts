import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RawServerDefault } from 'fastify';
import { serializerCompiler, validatorCompiler, hasZodFastifySchemaValidationErrors, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError, Errors, isDependencyUnavailable, validationError } from '@efs/errors';
import { childWithPlainKeys, type Logger } from '@efs/logging';
import { SpanKind, continuedTrace, inSpan, type Attributes, type SpanContext } from '@efs/telemetry';
import { clientErrorAnswer, frameworkError, ignoreExpectation, MAX_PARAM_LENGTH, requestLineError, serverTimeouts, statusError } from './edgeErrors.ts';
import { methodLabel, requestAttributes, requestDurationHistogram, statusIndex } from './requestMetrics.ts';
import { badTextError, jsonDeeperThan, jsonMayHoldBadText, MAX_JSON_DEPTH, tooDeepError } from './inputGuard.ts';

export { MAX_JSON_DEPTH } from './inputGuard.ts';
export { methodLabel, statusClass } from './requestMetrics.ts';
export { MAX_PARAM_LENGTH, MAX_URL_LENGTH } from './edgeErrors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The trace of the route's work (set when its handler starts), for the access-log line written after it. */
    spanContext?: SpanContext;
    /** Set by the JSON parser when the body's text has no `\u` escape: then no string in it can hold what badTextError refuses. */
    bodyTextPlain?: boolean;
  }
}

/** A listener with the zod type provider: route schemas type each request and reply. */
export type HttpServer = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

/** A dependency whose answer decides readiness. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

export interface HttpServerOptions {
  logger: Logger;
  /** The listener's name: the access log's `listener` and the request metrics' `listener` label. */
  name: string;
  /** The service the listener belongs to, as the request metrics' `service` label (the process's own name without it). */
  service?: string;
  bodyLimit?: number;
  requestTimeoutMs?: number;
  readiness?: ReadinessCheck[];
  /**
   * Methods served at a path, to answer 405 (with `Allow`) instead of 404 when the path exists
   * with other methods. Without it every unknown method and path answers 404.
   */
  allowedMethods?: (path: string) => string[];
  /**
   * Which proxies in front are trusted to name the client's address (X-Forwarded-For): Fastify's
   * `trustProxy` (a hop count, or addresses and CIDRs). Unset: the socket's peer is the client.
   */
  trustProxy?: number | string[];
}

/** Fastify's `trustProxy`: addresses as they are, a hop count as the function that trusts the nearest hops. */
const trustedProxies = (t: number | string[]): string[] | ((address: string, hop: number) => boolean) => (typeof t === 'number' ? (_address, hop) => hop < t : t);

/** Query parameters whose values are secrets (a portal session token travels in the URL; an OpenID Connect callback carries a code and state). */
const secretQueryParams = /^(token|access_token|api_key|key|secret|code|state|id_token_hint)$/i;

/** The URL as it may be logged: secret query values replaced. */
export function redactUrl(url: string): string {
  const i = url.indexOf('?');
  if (i < 0) return url;
  const params = new URLSearchParams(url.slice(i + 1));
  let changed = false;
  for (const k of [...params.keys()]) {
    if (secretQueryParams.test(k)) {
      params.set(k, '[redacted]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, i)}?${params.toString()}` : url;
}

/** Access-log view of a request: never its headers (Authorization, Cookie), never secret query values. */
function requestLogValue(req: FastifyRequest) {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}

/** Access-log view of a reply: its status. */
const responseLogValue = (reply: FastifyReply) => ({ statusCode: reply.statusCode });

function rawErrorResponse(err: AppError, extra: string = ''): string {
  const text = JSON.stringify(err.toBody());
  return `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n${extra}\r\n${text}`;
}

/** Answers an error with the specification's body; every 503 says when to retry. */
export function sendError(reply: FastifyReply, err: AppError, headers: Record<string, string> = {}): FastifyReply {
  if (err.status === 503) reply.header('retry-after', '1');
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.code(err.status).type('application/json; charset=utf-8').send(err.toBody());
}

/**
 * One access-log line per request, written when it is answered and naming what was asked, instead
 * of Fastify's two (`incoming request` stays, at debug): each line is a redaction and a write.
 */
class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Written once the answer is sent, outside the handler's trace context: its ids are named here.
    const trace = request.spanContext ? { trace_id: request.spanContext.traceId, span_id: request.spanContext.spanId } : {};
    if (error) reply.log.error({ ...trace, req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ ...trace, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/**
 * A Fastify server with what every listener shares: zod validation, request ids, one access-log
 * line per request through the process logger (an `incoming request` line too at debug), the
 * specification's error body for every failure (Fastify's own 404, body-parse and size errors
 * included), /healthz and /readyz.
 */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  let closing = false;
  const app = Fastify<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    // The access log's req and res are built here from named fields (never headers): no redaction needed.
    loggerInstance: childWithPlainKeys(opts.logger, { listener: opts.name }, { serializers: { req: requestLogValue, res: responseLogValue } }, ['req', 'res']),
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    ...(opts.trustProxy !== undefined ? { trustProxy: trustedProxies(opts.trustProxy) } : {}),
    ...serverTimeouts(opts.requestTimeoutMs ?? 30_000),
    // Answered below with the specification's error body instead of Fastify's own.
    return503OnClosing: false,
    // Malformed HTTP, header overflow and request timeouts never reach a route: answer them here
    // with the specification's error body too.
    clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(rawErrorResponse(clientErrorAnswer(err)));
      socket.destroy(err);
    },
    // The router's own refusals (bad percent-encoding, an over-long segment) get the error body too.
    frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
      reply.header('x-request-id', req.id);
      return sendError(reply, frameworkError(err));
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Fastify asks for each request's logger with an options object even when it is empty, which
    // sends pino down its slow child path (serializers, formatters and redaction set up again).
    childLoggerFactory: (logger, bindings, options) => (options.level === undefined && options.serializers === undefined ? logger.child(bindings) : logger.child(bindings, options)),
    ajv: undefined,
    logController: new AccessLog(),
  }).withTypeProvider<ZodTypeProvider>();
  // JSON only: a text/plain body answers 415 instead of reaching validation as a string.
  app.removeContentTypeParser('text/plain');
  // Many clients send `Content-Type: application/json` on every call, body or not: an empty body is
  // no body (a route that needs one still answers 400 through its schema); anything else is parsed
  // by Fastify's own JSON parser, prototype-poisoning protection included.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    // JSON travels as UTF-8 (RFC 8259 §8.1); a body declared otherwise would be read wrongly.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset && charset !== 'utf-8' && charset !== 'utf8') return done(Errors.UNSUPPORTED_MEDIA_TYPE('JSON bodies must be UTF-8'), undefined);
    if (jsonDeeperThan(body as string, MAX_JSON_DEPTH)) return done(tooDeepError(), undefined);
    req.bodyTextPlain = !jsonMayHoldBadText(body as string);
    return parseJson(req, body as string, done);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // The hooks that every request passes take Fastify's callback form: they never wait, and an
  // async hook costs a promise per request. A hook that answers sends the reply and calls no `done`.
  // A keep-alive connection whose request was in flight at close() is closed once it is answered.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // Draining: requests already in flight finish; a new one (on a kept-alive connection) is told to go elsewhere.
    if (closing) return void sendError(reply, Errors.SERVICE_UNAVAILABLE('This instance is shutting down; retry'), { connection: 'close' });
    const refused = requestLineError({ url: req.url, httpVersion: req.raw.httpVersion, headers: req.headers });
    if (refused) return void sendError(reply, refused);
    done();
  });
  // One check of every string a request brings, before any route's schema or handler sees it.
  app.addHook('preValidation', (req, reply, done) => {
    const bad = badTextError({ params: req.params, query: req.query, body: req.bodyTextPlain ? undefined : req.body });
    if (bad) return void sendError(reply, bad);
    done();
  });
  ignoreExpectation(app.server);
  app.decorateRequest('spanContext', undefined);
  app.decorateRequest('bodyTextPlain', false);

  // One duration point per answered request, its attributes built once per route and status
  // class (requestAttributes): the hook allocates nothing. A request no route matched (404,
  // 405) is recorded without a route by the server-wide hook below.
  const duration = requestDurationHistogram();
  const labels = { listener: opts.name, service: opts.service };
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    const byMethod = new Map(methods.map((m) => [m, requestAttributes(labels, m, route.url)]));
    const only = methods.length === 1 ? byMethod.get(methods[0]!)! : undefined;
    const record = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const attrs = only ?? byMethod.get(req.method) ?? requestAttributes(labels, req.method, route.url);
      duration.record(reply.elapsedTime / 1000, attrs[statusIndex(reply.statusCode)]);
      done();
    };
    route.onResponse = route.onResponse === undefined ? [record] : [...[route.onResponse].flat(), record];
  });
  const unmatched = new Map<string, Attributes[]>();
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) {
      const method = methodLabel(req.method);
      let attrs = unmatched.get(method);
      if (!attrs) unmatched.set(method, (attrs = requestAttributes(labels, method, undefined)));
      duration.record(reply.elapsedTime / 1000, attrs[statusIndex(reply.statusCode)]);
    }
    done();
  });

  // Every route handler runs inside a server span that continues the caller's W3C trace context,
  // so the message hop and the SQL it causes join the same trace.
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function traced(this: unknown, req: FastifyRequest, reply: FastifyReply) {
      // The caller's trace when it sent one (no parsing when it did not).
      const parent = continuedTrace(req.headers as Record<string, string | undefined>);
      return inSpan(`${req.method} ${route.url}`, { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': req.method, 'http.route': route.url, 'efs.request_id': String(req.id) } }, async (span) => {
        req.spanContext = span.spanContext();
        const result = await (handler as (this: unknown, req: FastifyRequest, reply: FastifyReply) => unknown).call(this, req, reply);
        span.setAttribute('http.response.status_code', reply.statusCode);
        return result;
      });
    } as typeof route.handler;
  });

  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const location = err.validationContext === 'params' ? 'path' : err.validationContext === 'querystring' ? 'query' : err.validationContext === 'headers' ? 'header' : 'body';
      const issues = err.validation.map((v) => ({ ...v.params, path: v.instancePath.split('/').filter(Boolean), message: v.message ?? 'Invalid value', code: v.keyword }));
      return sendError(reply, validationError(issues, location));
    }
    if (err instanceof AppError) return sendError(reply, err);
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(reply, Errors.PAYLOAD_TOO_LARGE(`Request body is larger than ${app.initialConfig.bodyLimit} bytes`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(reply, Errors.UNSUPPORTED_MEDIA_TYPE());
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(reply, Errors.VALIDATION_ERROR('Request body is empty or malformed'));
    }
    if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return sendError(reply, Errors.VALIDATION_ERROR('Malformed JSON body', { errors: [{ message: 'Malformed JSON body', path: '' }], detail: [{ loc: ['body'], msg: 'Malformed JSON body', type: 'json_invalid' }] }));
    }
    const refused = statusError(err.statusCode);
    if (refused) return sendError(reply, refused);
    if (isDependencyUnavailable(err)) {
      req.log.warn({ err }, 'a dependency is unavailable; answered 503');
      return sendError(reply, Errors.SERVICE_UNAVAILABLE('A dependency of this service is unavailable; retry later'));
    }
    req.log.error({ err }, 'unhandled error');
    return sendError(reply, Errors.INTERNAL_ERROR());
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = opts.allowedMethods?.(path) ?? [];
    if (allowed.length > 0) return sendError(reply, Errors.METHOD_NOT_ALLOWED(`${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`), { allow: allowed.join(', ') });
    return sendError(reply, Errors.NOT_FOUND(`No route ${req.method} ${path}`));
  });

  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { public: true } }, async (_req, reply) => {
    const results = await Promise.all((opts.readiness ?? []).map(async (c) => ({ name: c.name, ok: await c.check().catch(() => false) })));
    const ready = results.every((r) => r.ok);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : 'failing'])) });
  });
  return app;
}
