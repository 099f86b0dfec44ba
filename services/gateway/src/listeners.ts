import { createHttpServer, type HttpServer, type ReadinessCheck } from '@efs/http';
import type { Logger } from '@efs/logging';
import type { Authenticator, TokenKindName } from './auth/authenticate.ts';
import type { GatewayConfig } from './config.ts';
import type { KnexIdempotencyKeys } from './idempotency/idempotencyKeys.ts';
import type { InFlightLimit } from './limits/inFlightLimit.ts';
import type { FixedWindowRateLimiter } from './limits/rateLimiter.ts';
import { publicRoutesPlugin, utilityRoutesPlugin } from './plugins/apiRoutes.ts';
import { authPlugin } from './plugins/auth.ts';
import { idempotencyPlugin } from './plugins/idempotency.ts';
import { loadShedPlugin } from './plugins/loadShed.ts';
import { openApiPlugin } from './plugins/openApi.ts';
import { portalRoutesPlugin } from './plugins/portalRoutes.ts';
import { portalRouteTable, type PortalOptions } from './portal/portalListener.ts';
import { rateLimitPlugin } from './plugins/rateLimit.ts';
import { OPENADR_PREFIX, openAdrRoutes, type OpenAdrOptions } from './openadr/openAdrRoutes.ts';
import type { RouteDef, RouteDeps } from './routes/route.ts';

export const API_VERSION = '1.0.0';

export type ListenerName = 'public' | 'utility' | 'portal';
export type Listeners = Record<ListenerName, HttpServer>;

export interface ListenerDeps {
  config: GatewayConfig;
  logger: Logger;
  readiness: ReadinessCheck[];
  routes: readonly RouteDef[];
  /** What the routes' handlers use. */
  routeDeps: RouteDeps;
  authenticator: Authenticator;
  limiter: FixedWindowRateLimiter;
  /** Requests in flight over all three listeners (GATEWAY_MAX_IN_FLIGHT). */
  inFlight: InFlightLimit;
  idempotencyKeys: KnexIdempotencyKeys;
  portal: PortalOptions;
  /** The OpenADR 3.1 VTN face of the utility listener (its clients and tokens). */
  openadr: Pick<OpenAdrOptions, 'clients' | 'tokenTtlSeconds'>;
}

/** A route pattern (`/v1/site/:siteId`) as a regular expression over concrete paths. */
const pathPattern = (url: string) => new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`);

/** A listener with what all three share, answering 405 (with Allow) for a known path's other methods. */
function listener(deps: ListenerDeps, name: ListenerName, own: readonly { method: string; url: string }[]): HttpServer {
  const patterns = own.map((r) => ({ method: r.method, pattern: pathPattern(r.url) }));
  return createHttpServer({
    logger: deps.logger,
    name,
    service: 'gateway',
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    requestTimeoutMs: deps.config.HTTP_REQUEST_TIMEOUT_MS,
    readiness: deps.readiness,
    ...(deps.config.TRUST_PROXY !== undefined ? { trustProxy: deps.config.TRUST_PROXY } : {}),
    allowedMethods: (path) => [...new Set(patterns.filter((r) => r.pattern.test(path)).map((r) => r.method))],
  });
}

/**
 * The three listeners, each built from named plugins: the public and utility APIs (load
 * shedding, auth, the rate limit, Idempotency-Key, OpenAPI, and the listener's routes; the
 * utility listener also the OpenADR 3.1 VTN under /openadr3/3.1, see openadr/) and the
 * portal (its page, session redemption and the site's API for portal sessions, after the same
 * load shedding, auth, rate limit and Idempotency-Key).
 */
export async function createListeners(deps: ListenerDeps): Promise<Listeners> {
  const { config } = deps;
  const limits: Record<TokenKindName, number> = { client: config.RATE_LIMIT_CLIENT, site: config.RATE_LIMIT_SITE, portalSession: config.RATE_LIMIT_SESSION, utility: config.RATE_LIMIT_UTILITY };
  const api = async (name: 'public' | 'utility') => {
    const routes = deps.routes.filter((r) => r.listener === name);
    const app = listener(deps, name, routes);
    await app.register(loadShedPlugin, { limit: deps.inFlight, listener: name });
    await app.register(authPlugin, { authenticator: deps.authenticator });
    await app.register(rateLimitPlugin, { limiter: deps.limiter, limits, listener: name });
    await app.register(idempotencyPlugin, { keys: deps.idempotencyKeys, logger: deps.logger, listener: name });
    await app.register(openApiPlugin, { listener: name, version: API_VERSION });
    await app.register(name === 'public' ? publicRoutesPlugin : utilityRoutesPlugin, { routes, deps: deps.routeDeps });
    if (name === 'utility') {
      const openadr = { ...deps.openadr, limiter: deps.limiter, limits: { BL: limits.utility, VEN: limits.client } };
      await app.register(openAdrRoutes, { prefix: OPENADR_PREFIX, ...openadr, transport: deps.routeDeps.transport, timeoutMs: deps.routeDeps.timeoutMs, graceMs: deps.routeDeps.graceMs });
    }
    return app;
  };
  const portal = listener(deps, 'portal', portalRouteTable(deps.routes));
  await portal.register(loadShedPlugin, { limit: deps.inFlight, listener: 'portal' });
  await portal.register(authPlugin, { authenticator: deps.authenticator });
  await portal.register(rateLimitPlugin, { limiter: deps.limiter, limits, listener: 'portal' });
  await portal.register(idempotencyPlugin, { keys: deps.idempotencyKeys, logger: deps.logger, listener: 'portal' });
  await portal.register(portalRoutesPlugin, { ...deps.portal, routes: deps.routes, routeDeps: deps.routeDeps, limiter: deps.limiter, addressLimit: config.RATE_LIMIT_PORTAL_ADDRESS });
  return { public: await api('public'), utility: await api('utility'), portal };
}

/** The address a started listener answers on. */
export function listenerAddress(s: HttpServer): string {
  const a = s.server.address();
  return a && typeof a === 'object' ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : '';
}
