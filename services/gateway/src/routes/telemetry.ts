import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { ReadingIngestOperations, TelemetryOperations, TelemetryRow, type TelemetryPageType } from '@efs/api';
import { telemetryIngestHandler } from '../handlers/telemetryIngest.ts';
import { NEXT_CURSOR_HEADER, telemetryPageHandlers } from '../handlers/telemetryPage.ts';
import { principalOf } from '../plugins/auth.ts';
import { Audience, localRoute, type RouteDef } from './route.ts';

const ingest = { method: 'POST', ...Audience.integrator, tags: ['Telemetry'] } as const;

/** `POST /v1/telemetry/BATTERY`: answered by the gateway, which produces the readings to their topic itself. */
export const batteryTelemetryRoute = localRoute(
  {
    ...ingest,
    url: '/v1/telemetry/BATTERY',
    operation: ReadingIngestOperations.ingestBattery,
    summary: 'Reports battery telemetry: at most 1,000 items, each answered OK or FAILED in request order',
  },
  (deps) => {
    const handle = telemetryIngestHandler(deps);
    return async (req) => handle(principalOf(req), 'INTERVAL', req.body.telemetry);
  },
);

/** `POST /v1/telemetry`: the legacy path of the same. */
export const legacyTelemetryRoute = localRoute(
  {
    ...ingest,
    url: '/v1/telemetry',
    operation: ReadingIngestOperations.ingestBattery,
    summary: 'Reports battery telemetry (legacy path of POST /v1/telemetry/BATTERY)',
  },
  (deps) => {
    const handle = telemetryIngestHandler(deps);
    return async (req) => handle(principalOf(req), 'INTERVAL', req.body.telemetry);
  },
);

/** `POST /v1/telemetry/BATTERY_COUNTER`: lifetime counters, turned into intervals by telemetry-ingest. */
export const counterTelemetryRoute = localRoute(
  {
    ...ingest,
    url: '/v1/telemetry/BATTERY_COUNTER',
    operation: ReadingIngestOperations.ingestCounters,
    summary: 'Reports lifetime battery counters, turned into intervals by difference with the previous reading',
  },
  (deps) => {
    const handle = telemetryIngestHandler(deps);
    return async (req) => handle(principalOf(req), 'COUNTER', req.body.telemetry);
  },
);

const page = z.array(TelemetryRow).describe('One page, in time order; the `Next-Cursor` header, when present, is the `cursor` of the next page.');
const read = { method: 'POST', ...Audience.utility, tags: ['Telemetry'], schema: { response: page } } as const;

/** A page's rows as the body, its next cursor (if any) in the header. */
function sendPage(reply: FastifyReply, p: TelemetryPageType): FastifyReply {
  if (p.next_cursor) reply.header(NEXT_CURSOR_HEADER, p.next_cursor);
  return reply.send(p.rows);
}

/** `POST {utility}/v1/telemetry/latest`: from telemetry-ingest; the gateway moves the next cursor into a header. */
export const latestTelemetryRoute = localRoute(
  {
    ...read,
    url: '/v1/telemetry/latest',
    operation: TelemetryOperations.latestTelemetry,
    summary: "Latest reading of each device with a current enrollment in the utility's program",
  },
  (deps) => {
    const { latest } = telemetryPageHandlers(deps);
    return async (req, reply) => sendPage(reply, await latest(principalOf(req), req.body));
  },
);

/** `POST {utility}/v1/telemetry/historical`: likewise. */
export const historicalTelemetryRoute = localRoute(
  {
    ...read,
    url: '/v1/telemetry/historical',
    operation: TelemetryOperations.historicalTelemetry,
    summary: "Readings of the program's currently enrolled devices that start inside a window, in time order, a page at a time",
  },
  (deps) => {
    const { historical } = telemetryPageHandlers(deps);
    return async (req, reply) => sendPage(reply, await historical(principalOf(req), req.body));
  },
);

/** Telemetry: device clouds report (client token), utilities read their enrolled devices' readings (API key). */
export const telemetryRoutes: readonly RouteDef[] = [batteryTelemetryRoute, legacyTelemetryRoute, counterTelemetryRoute, latestTelemetryRoute, historicalTelemetryRoute];
