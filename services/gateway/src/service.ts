import type { FastifyInstance } from 'fastify';
import type { Principal } from '@efs/contracts';
import { createHttpServer, type HttpServer } from '@efs/http';
import type { Service, ServiceDeps } from '@efs/runtime';
import { authenticate } from './auth/authenticate.ts';
import { KnexCredentialStore } from './auth/credentialStore.ts';
import type { GatewayConfig } from './config.ts';
import { forward } from './forward.ts';
import { allRoutes } from './routes/index.ts';
import type { Listener, RouteDef } from './routes/route.ts';

export const AUTH_SCHEMA = 'auth';
export const SANDBOX_INTEGRATOR_ID = 'sandbox-integrator';
export const SANDBOX_UTILITY_ID = 'sandbox-utility';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface GatewayService extends Service {
  /** Addresses of the listeners once started. */
  urls(): Record<'public' | 'utility' | 'portal', string>;
}

/** Composition root of the gateway: credential store, the three listeners, routes forwarded over messaging. */
export async function createGatewayService(deps: ServiceDeps<GatewayConfig>): Promise<GatewayService> {
  const { config, transport } = deps;
  const logger = deps.logger.child({ service: 'gateway' });
  const store = new KnexCredentialStore(deps.db.knex, AUTH_SCHEMA);
  const readiness = [
    { name: 'messaging', check: () => transport.isReady() },
    { name: 'database', check: async () => (await deps.db.knex.raw('select 1'), true) },
  ];
  const make = (name: string) => createHttpServer({ logger, name, bodyLimit: config.BODY_LIMIT_BYTES, readiness });
  const servers: Record<'public' | 'utility' | 'portal', HttpServer> = { public: make('public'), utility: make('utility'), portal: make('portal') };

  function register(app: FastifyInstance, route: RouteDef): void {
    app.route({
      method: route.method,
      url: route.url,
      schema: { ...route.schema, summary: route.summary, tags: route.tags },
      // Authentication runs before validation: an anonymous caller learns nothing about the body.
      onRequest: async (req) => {
        req.principal = await authenticate(req, route.auth, store);
      },
      handler: async (req, reply) => forward(route, req.principal!, req, reply, transport, config.REQUEST_TIMEOUT_MS),
    });
  }
  for (const route of allRoutes) register(servers[route.listener satisfies Listener], route);

  async function registerSandbox(): Promise<void> {
    if (config.SANDBOX_CLIENT_TOKEN) {
      await store.ensureIntegrator(SANDBOX_INTEGRATOR_ID, 'Sandbox integrator');
      await store.createClientToken(SANDBOX_INTEGRATOR_ID, 'sandbox', config.SANDBOX_CLIENT_TOKEN);
    }
    if (config.SANDBOX_UTILITY_API_KEY) {
      await store.ensureUtility(SANDBOX_UTILITY_ID, 'Sandbox utility');
      await store.createUtilityKey(SANDBOX_UTILITY_ID, 'sandbox', config.SANDBOX_UTILITY_API_KEY);
    }
  }

  const address = (s: HttpServer) => {
    const a = s.server.address();
    return a && typeof a === 'object' ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : '';
  };

  return {
    name: 'gateway',
    readiness,
    async start() {
      await registerSandbox();
      await servers.public.listen({ port: config.PORT, host: config.HOST });
      await servers.utility.listen({ port: config.UTILITY_PORT, host: config.HOST });
      await servers.portal.listen({ port: config.PORTAL_PORT, host: config.HOST });
    },
    async stop() {
      // close() stops accepting connections and waits for requests in flight.
      await Promise.all(Object.values(servers).map((s) => s.close()));
    },
    urls: () => ({ public: address(servers.public), utility: address(servers.utility), portal: address(servers.portal) }),
  };
}
