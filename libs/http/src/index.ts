import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, hasZodFastifySchemaValidationErrors, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError, errorBody, toErrorBody, validationError, type ErrorBody } from '@efs/errors';
import type { Logger } from '@efs/logging';

export type HttpServer = FastifyInstance;

/** A dependency whose answer decides readiness. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

export interface HttpServerOptions {
  logger: Logger;
  name: string;
  bodyLimit?: number;
  requestTimeoutMs?: number;
  readiness?: ReadinessCheck[];
}

export function sendError(reply: FastifyReply, body: ErrorBody, headers: Record<string, string> = {}): FastifyReply {
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.code(body.status_code).type('application/json; charset=utf-8').send(body);
}

/**
 * A Fastify server with what every listener shares: zod validation, request ids, access logs
 * through the process logger, the specification's error body for every failure (Fastify's own
 * 404, body-parse and size errors included), /healthz and /readyz.
 */
export function createHttpServer(opts: HttpServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger.child({ listener: opts.name }),
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    requestTimeout: opts.requestTimeoutMs ?? 30_000,
    connectionTimeout: 60_000,
    return503OnClosing: true,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    ajv: undefined,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const location = err.validationContext === 'params' ? 'path' : err.validationContext === 'querystring' ? 'query' : err.validationContext === 'headers' ? 'header' : 'body';
      const issues = err.validation.map((v) => ({ path: v.instancePath.split('/').filter(Boolean), message: v.message ?? 'Invalid value', code: v.keyword }));
      return sendError(reply, validationError(issues, location).toBody());
    }
    if (err instanceof AppError) return sendError(reply, err.toBody(), err.status === 503 ? { 'retry-after': '1' } : {});
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(reply, errorBody('PAYLOAD_TOO_LARGE', `Request body is larger than ${app.initialConfig.bodyLimit} bytes`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(reply, errorBody('UNSUPPORTED_MEDIA_TYPE'));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(reply, errorBody('VALIDATION_ERROR', 'Request body is empty or malformed'));
    }
    if (err.statusCode === 400 || err instanceof SyntaxError) {
      return sendError(reply, errorBody('VALIDATION_ERROR', 'Malformed JSON body', { errors: [{ message: 'Malformed JSON body', path: '' }], detail: [{ loc: ['body'], msg: 'Malformed JSON body', type: 'json_invalid' }] }));
    }
    req.log.error({ err }, 'unhandled error');
    return sendError(reply, toErrorBody(err));
  });

  app.setNotFoundHandler((req, reply) => sendError(reply, errorBody('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`)));

  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { public: true } }, async (_req, reply) => {
    const results = await Promise.all((opts.readiness ?? []).map(async (c) => ({ name: c.name, ok: await c.check().catch(() => false) })));
    const ready = results.every((r) => r.ok);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : 'failing'])) });
  });
  return app as unknown as FastifyInstance;
}
