import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseTelemetryConfig, type TelemetryConfig } from './config.ts';
import { TELEMETRY_SCHEMA } from './context.ts';
import { createTelemetryService, type TelemetryService } from './service.ts';

export const telemetryModule: ServiceModule<TelemetryConfig, TelemetryService> = {
  name: 'telemetry-ingest',
  schema: TELEMETRY_SCHEMA,
  migrations,
  config: parseTelemetryConfig,
  create: createTelemetryService,
};
