import { TelemetryOperations, type TelemetryHistoricalRequestType, type TelemetryLatestRequestType, type TelemetryPageType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { call, type Transport } from '@efs/messaging';

/** Header carrying the cursor of the next page of a utility telemetry read; absent on the last page. */
export const NEXT_CURSOR_HEADER = 'next-cursor';

/**
 * `POST {utility}/v1/telemetry/latest` and `/historical`: telemetry-ingest answers a page, rows and
 * the cursor of the next one; the route sends the rows as the body (a JSON array, as every list
 * answers) and the cursor in the `Next-Cursor` header.
 */
export function telemetryPageHandlers(deps: { transport: Transport; timeoutMs: number }) {
  const opts = { timeoutMs: deps.timeoutMs };
  return {
    latest: (principal: Principal, body: TelemetryLatestRequestType): Promise<TelemetryPageType> => call(deps.transport, TelemetryOperations.latestTelemetry, { principal, body }, opts),
    historical: (principal: Principal, body: TelemetryHistoricalRequestType): Promise<TelemetryPageType> => call(deps.transport, TelemetryOperations.historicalTelemetry, { principal, body }, opts),
  };
}
