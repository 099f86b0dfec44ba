import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { TokenKindName } from '../auth/authenticate.ts';
import type { Listener, RouteDef } from '../routes/route.ts';

/** OpenAPI security scheme of each token kind: all are `Authorization: Bearer`, told apart by prefix. */
export const SecuritySchemeOf: Record<TokenKindName, string> = {
  client: 'clientToken',
  site: 'siteToken',
  portalSession: 'portalSession',
  utility: 'utilityKey',
};

const schemes = {
  clientToken: { type: 'http', scheme: 'bearer', bearerFormat: 'efs_ct_…', description: 'Client token of an integrator (Cloud API), created with `efs client-token create`; never expires, revocable.' },
  siteToken: { type: 'http', scheme: 'bearer', bearerFormat: 'efs_st_…', description: 'Site token from POST /v1/auth/site/{siteId} (Mobile App API): one site, one hour.' },
  portalSession: { type: 'http', scheme: 'bearer', bearerFormat: 'efs_ps_…', description: 'Portal session started by redeeming a session token at {portal_url}/auth/session_token.' },
  utilityKey: { type: 'http', scheme: 'bearer', bearerFormat: 'efs_uk_…', description: "Utility API key: one utility's programs only." },
} as const;

/** The security requirement of a route: any one of the token kinds it accepts. */
export const securityOf = (route: RouteDef): Record<string, string[]>[] => route.auth.accepts.map((k) => ({ [SecuritySchemeOf[k]]: [] }));

const titles: Record<Listener, { title: string; description: string; kinds: TokenKindName[] }> = {
  public: {
    title: 'Energy Flexibility Enrollment Service — Cloud API and Mobile App API',
    description: 'Commissioning, site tokens, portal sessions, programs, devices and enrollments. Every error answers {code, message, status_code, detail, errors}.',
    kinds: ['client', 'site', 'portalSession'],
  },
  utility: {
    title: 'Energy Flexibility Enrollment Service — Utility API',
    description: "A utility's programs, their enrollments, events and telemetry. Every error answers {code, message, status_code, detail, errors}.",
    kinds: ['utility'],
  },
};

const openApi: FastifyPluginAsyncZod<{ listener: Listener; version: string }> = async (app, { listener, version }) => {
  const t = titles[listener];
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: t.title, description: t.description, version },
      components: { securitySchemes: Object.fromEntries(t.kinds.map((k) => [SecuritySchemeOf[k], schemes[SecuritySchemeOf[k] as keyof typeof schemes]])) },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
    hideUntagged: false,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

/**
 * OpenAPI 3.1 document of one listener, generated from the routes' zod schemas, at `/openapi.json`,
 * with the rendered reference at `/docs`. It collects routes as they are added, so the routes
 * plugins depend on it.
 */
export const openApiPlugin = fp(openApi, { name: 'efs-openapi' });
