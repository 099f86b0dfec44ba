import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { SessionCreateRequestType, SessionTokenResponseType, SiteTokenResponseType, TelemetryHistoricalRequestType, TelemetryIngestResponseType, TelemetryLatestRequestType, TelemetryPageType } from '@efs/api';
import type { Principal, ReadingMessage } from '@efs/contracts';
import type { Transport } from '@efs/messaging';
import { forward } from '../forward.ts';
import { sessionRoute, siteTokenRoute } from '../routes/auth.ts';
import { NEXT_CURSOR_HEADER } from '../handlers/telemetryPage.ts';
import { batteryTelemetryRoute, counterTelemetryRoute, historicalTelemetryRoute, latestTelemetryRoute, legacyTelemetryRoute } from '../routes/telemetry.ts';
import { routeOptions, type Listener, type RouteDef } from '../routes/route.ts';
import { principalOf } from './auth.ts';

export interface ApiRoutesOptions {
  /** The listener's routes. */
  routes: readonly RouteDef[];
  transport: Transport;
  timeoutMs: number;
  graceMs: number;
  validateReplies: boolean;
  /** The routes the gateway answers itself. */
  issueSiteToken(principal: Principal, siteId: string): Promise<SiteTokenResponseType>;
  createSession(principal: Principal, body: SessionCreateRequestType): Promise<SessionTokenResponseType>;
  /** Telemetry ingest: produced to the readings topic by the gateway itself. */
  ingestTelemetry(principal: Principal, kind: ReadingMessage['kind'], items: readonly unknown[]): Promise<TelemetryIngestResponseType>;
  /** Utility telemetry reads: a page from telemetry-ingest, whose next cursor goes into a header. */
  readTelemetry: {
    latest(principal: Principal, body: TelemetryLatestRequestType): Promise<TelemetryPageType>;
    historical(principal: Principal, body: TelemetryHistoricalRequestType): Promise<TelemetryPageType>;
  };
}

/** A page's rows as the body, its next cursor (if any) in the header. */
function sendPage(reply: FastifyReply, page: TelemetryPageType): FastifyReply {
  if (page.next_cursor) reply.header(NEXT_CURSOR_HEADER, page.next_cursor);
  return reply.send(page.rows);
}


/**
 * The routes of one API listener: each forwarded to its operation's service, except token
 * issuance, which the gateway answers itself. Depends on authentication and the rate limit (their
 * hooks run first) and on OpenAPI (which documents the routes as they are added).
 */
function apiRoutes(listener: Listener) {
  const plugin: FastifyPluginAsyncZod<ApiRoutesOptions> = async (app, opts) => {
    for (const route of opts.routes) {
      if (route.listener !== listener) throw new Error(`route ${route.method} ${route.url} belongs to the ${route.listener} listener`);
      if (route.auth.accepts.length === 0) throw new Error(`route ${route.method} ${route.url} accepts no token kind`);
      if (route === siteTokenRoute) {
        app.route({
          ...routeOptions(siteTokenRoute),
          handler: async (req, reply) => reply.header('cache-control', 'no-store').send(await opts.issueSiteToken(principalOf(req), req.params.siteId)),
        });
      } else if (route === sessionRoute) {
        app.route({
          ...routeOptions(sessionRoute),
          handler: async (req, reply) => reply.header('cache-control', 'no-store').send(await opts.createSession(principalOf(req), req.body)),
        });
      } else if (route === batteryTelemetryRoute || route === legacyTelemetryRoute) {
        // The legacy path is the same route at another URL (its own summary in OpenAPI).
        const options = routeOptions(batteryTelemetryRoute);
        app.route({ ...options, url: route.url, schema: { ...options.schema, summary: route.summary }, handler: async (req) => opts.ingestTelemetry(principalOf(req), 'INTERVAL', req.body.telemetry) });
      } else if (route === counterTelemetryRoute) {
        app.route({ ...routeOptions(counterTelemetryRoute), handler: async (req) => opts.ingestTelemetry(principalOf(req), 'COUNTER', req.body.telemetry) });
      } else if (route === latestTelemetryRoute) {
        app.route({ ...routeOptions(latestTelemetryRoute), handler: async (req, reply) => sendPage(reply, await opts.readTelemetry.latest(principalOf(req), req.body)) });
      } else if (route === historicalTelemetryRoute) {
        app.route({ ...routeOptions(historicalTelemetryRoute), handler: async (req, reply) => sendPage(reply, await opts.readTelemetry.historical(principalOf(req), req.body)) });
      } else {
        app.route({
          ...routeOptions(route),
          handler: (req, reply) => forward(route, principalOf(req), req, reply, opts.transport, { timeoutMs: opts.timeoutMs, graceMs: opts.graceMs, validateReplies: opts.validateReplies }),
        });
      }
    }
  };
  return fp(plugin, { name: `efs-${listener}-routes`, dependencies: ['efs-auth', 'efs-rate-limit', 'efs-openapi', 'efs-idempotency'] });
}

export const publicRoutesPlugin = apiRoutes('public');
export const utilityRoutesPlugin = apiRoutes('utility');
