import { defineOperations } from '@efs/contracts';
import { PerformanceRequest, PerformanceResponse, TelemetryBatch, TelemetryHistoricalRequest, TelemetryIngestResponse, TelemetryLatestRequest, TelemetryPage } from '../telemetry.ts';

/** What telemetry-ingest answers on efs.telemetry.requests; each handler is `handlers/<name>.ts`. */
export const TelemetryOperations = defineOperations('telemetry', {
  /** A utility's read: each currently enrolled device's newest reading, a page at a time. */
  latestTelemetry: { body: TelemetryLatestRequest, response: TelemetryPage, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  /** A utility's read: the currently enrolled devices' readings in a window, a page at a time. */
  historicalTelemetry: { body: TelemetryHistoricalRequest, response: TelemetryPage, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  /** Internal (event-dispatch): what devices actually delivered in an event's window. */
  devicePerformance: { body: PerformanceRequest, response: PerformanceResponse, errors: ['FORBIDDEN'] },
});

/**
 * Telemetry ingest, answered by the gateway itself: it validates the items, checks their devices
 * and produces the accepted readings to efs.telemetry.reading-batches, which telemetry-ingest consumes.
 * No request message is sent (a write that only needs to be durable needs no reply), so no
 * service implements these; they give the routes their schemas and errors.
 */
export const ReadingIngestOperations = defineOperations('telemetry', {
  ingestBattery: { body: TelemetryBatch, response: TelemetryIngestResponse, errors: ['SERVICE_UNAVAILABLE'] },
  ingestCounters: { body: TelemetryBatch, response: TelemetryIngestResponse, errors: ['SERVICE_UNAVAILABLE'] },
});
