import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CredentialsTopic, type Principal } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { errorBody } from '@efs/errors';
import { createHttpServer, sendError, type HttpServer } from '@efs/http';
import { instanceId, type Service, type ServiceDeps } from '@efs/runtime';
import { Authenticator, type TokenKindName } from './auth/authenticate.ts';
import { CredentialCache } from './auth/credentialCache.ts';
import { KnexCredentialStore } from './auth/credentialStore.ts';
import { KnexSessionTokenStore } from './auth/sessionTokens.ts';
import { SignedTokens, type Keyring } from './auth/signedTokens.ts';
import { KnexKeyring, StaticKeyring } from './auth/signingKeys.ts';
import type { GatewayConfig } from './config.ts';
import { forward } from './forward.ts';
import { portalSessionHandler } from './handlers/portalSession.ts';
import { sessionHandler } from './handlers/sessions.ts';
import { siteTokenHandler } from './handlers/siteToken.ts';
import { FixedWindowRateLimiter, rateLimitHeaders } from './limits/rateLimiter.ts';
import { registerOpenApi, securityOf } from './openapi.ts';
import { allRoutes } from './routes/index.ts';
import type { GatewayHandlerName, Listener, RouteDef } from './routes/route.ts';

export const AUTH_SCHEMA = 'auth';
export const SANDBOX_INTEGRATOR_ID = 'sandbox-integrator';
export const SANDBOX_UTILITY_ID = 'sandbox-utility';
export const API_VERSION = '1.0.0';
/** Where the portal listener redeems session tokens (the `portal_url` of POST /v1/sessions). */
export const PORTAL_REDEEM_PATH = '/auth/session_token';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface GatewayService extends Service {
  /** Addresses of the listeners once started. */
  urls(): Record<'public' | 'utility' | 'portal', string>;
  /** Resolves once every credential change written so far is published (tests, CLI). */
  flushCredentials(): Promise<void>;
}

export interface GatewayOptions {
  /** The routes to serve; all of them unless a test narrows it. */
  routes?: readonly RouteDef[];
}

/** A route pattern (`/v1/site/:siteId`) as a regular expression over concrete paths. */
const pathPattern = (url: string) => new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`);

/**
 * Composition root of the gateway: credentials (memory, kept current from efs.auth.credentials),
 * signed site tokens and portal sessions, the three listeners with OpenAPI, rate limits, and the
 * routes forwarded over messaging.
 */
export async function createGatewayService(deps: ServiceDeps<GatewayConfig>, options: GatewayOptions = {}): Promise<GatewayService> {
  const { config, transport } = deps;
  const knex = deps.db.knex;
  const routes = options.routes ?? allRoutes;
  const replicaId = config.GATEWAY_INSTANCE_ID ?? instanceId();
  const logger = deps.logger.child({ service: 'gateway' });

  const outbox = new Outbox({ knex, schema: AUTH_SCHEMA, publisher: transport, logger, topics: [CredentialsTopic], pollMs: 250 });
  const store = new KnexCredentialStore(knex, AUTH_SCHEMA, outbox);
  const credentials = new CredentialCache();
  const keyring: Keyring & { start?(): Promise<void>; stop?(): void } = config.SITE_TOKEN_SIGNING_KEYS
    ? StaticKeyring.parse(config.SITE_TOKEN_SIGNING_KEYS)
    : new KnexKeyring({ knex, schema: AUTH_SCHEMA, refreshMs: config.SIGNING_KEYS_REFRESH_MS, logger });
  const signed = new SignedTokens(keyring);
  const authenticator = new Authenticator(credentials, signed);
  const sessions = new KnexSessionTokenStore(knex, AUTH_SCHEMA);
  const limiter = new FixedWindowRateLimiter({ windowSeconds: config.RATE_LIMIT_WINDOW_S, replicas: config.GATEWAY_REPLICAS });
  const limits: Record<TokenKindName, number> = { client: config.RATE_LIMIT_CLIENT, site: config.RATE_LIMIT_SITE, session: config.RATE_LIMIT_SESSION, utility: config.RATE_LIMIT_UTILITY };
  const kindName: Record<Principal['kind'], TokenKindName> = { CLIENT: 'client', SITE: 'site', PORTAL_SESSION: 'session', UTILITY: 'utility', SYSTEM: 'client' };

  const readiness = [
    { name: 'messaging', check: () => transport.isReady() },
    { name: 'database', check: async () => (await knex.raw('select 1'), true) },
  ];
  const make = (listener: 'public' | 'utility' | 'portal') => {
    const own = (listener === 'portal' ? [{ method: 'GET', url: PORTAL_REDEEM_PATH }] : routes.filter((r) => r.listener === listener)).map((r) => ({ method: r.method, pattern: pathPattern(r.url) }));
    return createHttpServer({
      logger,
      name: listener,
      bodyLimit: config.BODY_LIMIT_BYTES,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      readiness,
      allowedMethods: (path) => [...new Set(own.filter((r) => r.pattern.test(path)).map((r) => r.method))],
    });
  };
  const servers: Record<'public' | 'utility' | 'portal', HttpServer> = { public: make('public'), utility: make('utility'), portal: make('portal') };

  let portalAddress = '';
  const local: Record<GatewayHandlerName, (route: RouteDef, principal: Principal, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>> = {
    'site-token': siteTokenHandler({ transport, timeoutMs: config.REQUEST_TIMEOUT_MS, signed, ttlSeconds: config.SITE_TOKEN_TTL_S }),
    session: sessionHandler({ transport, timeoutMs: config.REQUEST_TIMEOUT_MS, sessions, ttlSeconds: config.SESSION_TOKEN_TTL_S, portalUrl: () => config.PORTAL_URL ?? portalAddress, redeemPath: PORTAL_REDEEM_PATH }),
  };

  function register(app: FastifyInstance, route: RouteDef): void {
    if (route.auth.accepts.length === 0) throw new Error(`route ${route.method} ${route.url} accepts no token kind`);
    app.route({
      method: route.method,
      url: route.url,
      schema: { ...route.schema, summary: route.summary, tags: route.tags, security: securityOf(route) },
      // Authentication runs before validation (onRequest precedes body parsing): an anonymous or
      // wrong caller learns nothing about the body, and is not counted against anyone's limit.
      onRequest: async (req, reply) => {
        const principal = await authenticator.authenticate(req, route.auth);
        req.principal = principal;
        reply.log = req.log = req.log.child({ principal_kind: principal.kind, token_id: principal.token_id });
        const decision = limiter.hit(`${principal.kind}:${principal.token_id}`, limits[kindName[principal.kind]]);
        reply.headers(rateLimitHeaders(decision));
        if (!decision.allowed) return sendError(reply, errorBody('RATE_LIMITED', `Over this token's limit of ${decision.limit} requests per ${decision.windowSeconds} s; retry in ${decision.resetSeconds} s`));
      },
      handler: async (req, reply) => {
        if (route.gatewayHandler) return local[route.gatewayHandler](route, req.principal!, req, reply);
        return forward(route, req.principal!, req, reply, transport, config.REQUEST_TIMEOUT_MS);
      },
    });
  }

  const redeem = portalSessionHandler({
    sessions,
    signed,
    credentials,
    ttlSeconds: config.PORTAL_SESSION_TTL_S,
    secure: (req) => (config.PORTAL_URL ?? '').startsWith('https:') || req.protocol === 'https',
  });
  servers.portal.get(PORTAL_REDEEM_PATH, redeem);

  // OpenAPI first (it collects routes as they are added), then each listener's routes.
  for (const listener of ['public', 'utility'] as const satisfies readonly Listener[]) {
    await registerOpenApi(servers[listener], listener, API_VERSION);
    for (const route of routes.filter((r) => r.listener === listener)) register(servers[listener], route);
  }

  async function registerSandbox(): Promise<void> {
    if (config.SANDBOX_CLIENT_TOKEN) {
      await store.ensureIntegrator(SANDBOX_INTEGRATOR_ID, 'Sandbox integrator');
      credentials.apply((await store.createClientToken(SANDBOX_INTEGRATOR_ID, 'sandbox', config.SANDBOX_CLIENT_TOKEN)).record);
    }
    if (config.SANDBOX_UTILITY_API_KEY) {
      await store.ensureUtility(SANDBOX_UTILITY_ID, 'Sandbox utility');
      credentials.apply((await store.createUtilityKey(SANDBOX_UTILITY_ID, 'sandbox', config.SANDBOX_UTILITY_API_KEY)).record);
    }
  }

  const address = (s: HttpServer) => {
    const a = s.server.address();
    return a && typeof a === 'object' ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : '';
  };

  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, what: string, fn: () => Promise<unknown>) => {
    const t = setInterval(() => void fn().catch((err: Error) => logger.warn({ err }, `${what} failed`)), ms);
    t.unref();
    timers.push(t);
  };

  return {
    name: 'gateway',
    readiness,
    async start() {
      await keyring.start?.();
      await registerSandbox();
      // Every replica reads every credential change (its own consumer group), and loads the table
      // as it is now; both merge into the same map, a revocation being final.
      credentials.applyAll(await store.listCredentials());
      await transport.subscribe(CredentialsTopic, `efs-gateway-credentials-${replicaId}`, async ({ value }) => credentials.apply(value), { fromBeginning: true });
      outbox.start();
      every(config.CREDENTIALS_RELOAD_MS, 'credentials reload', async () => credentials.applyAll(await store.listCredentials()));
      every(10 * 60_000, 'session token purge', () => sessions.purge());
      await servers.public.listen({ port: config.PORT, host: config.HOST });
      await servers.utility.listen({ port: config.UTILITY_PORT, host: config.HOST });
      await servers.portal.listen({ port: config.PORTAL_PORT, host: config.HOST });
      portalAddress = address(servers.portal);
      logger.info({ credentials: credentials.size, replica: replicaId }, 'gateway listening');
    },
    async stop() {
      // close() stops accepting connections and waits for the requests in flight to be answered
      // (a service's answer comes within REQUEST_TIMEOUT_MS); connections still open after that are cut.
      const force = setTimeout(() => Object.values(servers).forEach((s) => s.server.closeAllConnections()), config.REQUEST_TIMEOUT_MS + 2000);
      await Promise.all(Object.values(servers).map((s) => s.close()));
      clearTimeout(force);
      for (const t of timers) clearInterval(t);
      keyring.stop?.();
      await outbox.stop();
    },
    urls: () => ({ public: address(servers.public), utility: address(servers.utility), portal: address(servers.portal) }),
    flushCredentials: () => outbox.flush(),
  };
}
