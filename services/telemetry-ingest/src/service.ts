import { operationRouter, type Operation } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { TelemetryConfig } from './config.ts';

export const TELEMETRY_SCHEMA = 'telemetry';

/** Composition root of telemetry-ingest: device telemetry, ingested and served to utilities. */
export async function createTelemetryService(deps: ServiceDeps<TelemetryConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'telemetry-ingest' });
  const operations: Record<string, Operation<any, any, any>> = {};
  return {
    name: 'telemetry-ingest',
    async start() {
      await deps.transport.serve('telemetry', operationRouter(operations, logger));
    },
    async stop() {},
  };
}
