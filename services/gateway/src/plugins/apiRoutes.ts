import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { routeHandler } from '../forward.ts';
import { routeOptions, type Listener, type RouteDef, type RouteDeps } from '../routes/route.ts';

export interface ApiRoutesOptions {
  /** The listener's routes. */
  routes: readonly RouteDef[];
  /** What their handlers use. */
  deps: RouteDeps;
}

/**
 * The routes of one API listener: each answered by its own handler when the gateway answers it
 * itself, else forwarded to its operation's service. Depends on authentication and the rate limit
 * (their hooks run first) and on OpenAPI (which documents the routes as they are added).
 */
function apiRoutes(listener: Listener) {
  const plugin: FastifyPluginAsyncZod<ApiRoutesOptions> = async (app, opts) => {
    for (const route of opts.routes) {
      if (route.listener !== listener) throw new Error(`route ${route.method} ${route.url} belongs to the ${route.listener} listener`);
      if (route.auth.accepts.length === 0) throw new Error(`route ${route.method} ${route.url} accepts no token kind`);
      app.route({ ...routeOptions(route), handler: routeHandler(route, opts.deps) });
    }
  };
  return fp(plugin, { name: `efs-${listener}-routes`, dependencies: ['efs-auth', 'efs-rate-limit', 'efs-openapi', 'efs-idempotency'] });
}

export const publicRoutesPlugin = apiRoutes('public');
export const utilityRoutesPlugin = apiRoutes('utility');
