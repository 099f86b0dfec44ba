import { z } from 'zod';
import { ReadingIngestOperations, TelemetryOperations, TelemetryRow } from '@efs/api';
import { Audience, defineRoute, type RouteDef } from './route.ts';

const ingest = { method: 'POST', ...Audience.integrator, tags: ['Telemetry'] } as const;

/** `POST /v1/telemetry/BATTERY`: answered by the gateway, which produces the readings to their topic itself. */
export const batteryTelemetryRoute = defineRoute({
  ...ingest,
  url: '/v1/telemetry/BATTERY',
  operation: ReadingIngestOperations.ingestBattery,
  summary: 'Reports battery telemetry: at most 1,000 items, each answered OK or FAILED in request order',
});

/** `POST /v1/telemetry`: the legacy path of the same. */
export const legacyTelemetryRoute = defineRoute({
  ...ingest,
  url: '/v1/telemetry',
  operation: ReadingIngestOperations.ingestBattery,
  summary: 'Reports battery telemetry (legacy path of POST /v1/telemetry/BATTERY)',
});

/** `POST /v1/telemetry/BATTERY_COUNTER`: lifetime counters, turned into intervals by telemetry-ingest. */
export const counterTelemetryRoute = defineRoute({
  ...ingest,
  url: '/v1/telemetry/BATTERY_COUNTER',
  operation: ReadingIngestOperations.ingestCounters,
  summary: 'Reports lifetime battery counters, turned into intervals by difference with the previous reading',
});

const page = z.array(TelemetryRow).describe('One page, in time order; the `Next-Cursor` header, when present, is the `cursor` of the next page.');
const read = { method: 'POST', ...Audience.utility, tags: ['Telemetry'], schema: { response: page } } as const;

/** `POST {utility}/v1/telemetry/latest`: from telemetry-ingest; the gateway moves the next cursor into a header. */
export const latestTelemetryRoute = defineRoute({
  ...read,
  url: '/v1/telemetry/latest',
  operation: TelemetryOperations.latestTelemetry,
  summary: "Latest reading of each device with a current enrollment in the utility's program",
});

/** `POST {utility}/v1/telemetry/historical`: likewise. */
export const historicalTelemetryRoute = defineRoute({
  ...read,
  url: '/v1/telemetry/historical',
  operation: TelemetryOperations.historicalTelemetry,
  summary: "Readings of the program's currently enrolled devices that start inside a window, in time order, a page at a time",
});

/** Telemetry: device clouds report (client token), utilities read their enrolled devices' readings (API key). */
export const telemetryRoutes: readonly RouteDef[] = [batteryTelemetryRoute, legacyTelemetryRoute, counterTelemetryRoute, latestTelemetryRoute, historicalTelemetryRoute];
