import { TelemetryOperations } from '@efs/api';
import { EnrollmentsTopic, ProgramsTopic, ReadingsTopic, type ReadingMessage } from '@efs/contracts';
import { isDatabaseUnavailable, type Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { operationRouter, type HandlerMap } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { TelemetryConfig } from './config.ts';
import { DAY_MS, daysBetween } from './domain/partitions.ts';
import { historicalTelemetry } from './handlers/historicalTelemetry.ts';
import { latestTelemetry } from './handlers/latestTelemetry.ts';
import { onEnrollment } from './handlers/onEnrollment.ts';
import { onProgram } from './handlers/onProgram.ts';
import { onReadings } from './handlers/onReadings.ts';
import { devicePerformance } from './handlers/devicePerformance.ts';
import { KnexCounterStore } from './store/counterStore.ts';
import { PartitionStore } from './store/partitionStore.ts';
import { KnexReadingStore, type ReadingStore } from './store/readingStore.ts';
import { ReadingWriter } from './store/readingWriter.ts';
import { KnexReadModelStore, type ReadModelStore } from './store/readModelStore.ts';
import { WriteGroups } from './store/writeGroups.ts';

export const TELEMETRY_SCHEMA = 'telemetry';
/** The consumer group of the readings topic: its lag is what the deployment autoscales on. */
export const READINGS_CONSUMER_GROUP = 'efs-telemetry-reading-batches';

/** What the handlers of telemetry-ingest share. */
export interface TelemetryContext {
  knex: Knex;
  readings: ReadingStore;
  readModels: ReadModelStore;
  writer: ReadingWriter;
  /** The writer's transactions, shared by the partition batches consumed at the same time. */
  writes: WriteGroups<ReadingMessage>;
  logger: Logger;
}

export interface TelemetryService extends Service {
  readonly context: TelemetryContext;
}

/**
 * Composition root of telemetry-ingest: readings consumed from their topic in batches and written
 * in bulk into day-partitioned tables; utilities' reads of their enrolled devices; what devices
 * delivered during an event (for event-dispatch).
 */
export async function createTelemetryService(deps: ServiceDeps<TelemetryConfig>): Promise<TelemetryService> {
  const { config } = deps;
  const logger = deps.logger.child({ service: 'telemetry-ingest' });
  const knex = deps.db.knex;
  const readings = new KnexReadingStore({ schema: TELEMETRY_SCHEMA, kind: deps.db.kind });
  const partitions = new PartitionStore({ knex, schema: TELEMETRY_SCHEMA, logger });
  const writer = new ReadingWriter({ knex, readings, counters: new KnexCounterStore(TELEMETRY_SCHEMA), partitions });
  // A group failing because the database is unreachable fails its batches at once (they retry with their own backoff), not one by one.
  const writes = new WriteGroups<ReadingMessage>({ write: (items) => writer.write(items), maxItems: config.TELEMETRY_BATCH_SIZE, writers: config.TELEMETRY_WRITERS, splits: (err) => !isDatabaseUnavailable(err) });
  const ctx: TelemetryContext = { knex, readings, readModels: new KnexReadModelStore(TELEMETRY_SCHEMA), writer, writes, logger };

  const handlers = {
    latestTelemetry: latestTelemetry(ctx),
    historicalTelemetry: historicalTelemetry(ctx),
    devicePerformance: devicePerformance(ctx),
  } satisfies HandlerMap<typeof TelemetryOperations>;

  const ahead = () => partitions.ensure(daysBetween(Date.now() - DAY_MS, Date.now() + config.TELEMETRY_PARTITIONS_AHEAD_DAYS * DAY_MS));
  let timer: NodeJS.Timeout | undefined;

  return {
    name: 'telemetry-ingest',
    context: ctx,
    async start() {
      await partitions.load();
      await ahead();
      timer = setInterval(() => void ahead().catch((err: Error) => logger.warn({ err }, 'creating partitions ahead failed; will retry')), config.TELEMETRY_MAINTENANCE_MS);
      timer.unref();
      await deps.transport.subscribe(ProgramsTopic, 'efs-telemetry-programs', onProgram(ctx), { fromBeginning: true });
      await deps.transport.subscribe(EnrollmentsTopic, 'efs-telemetry-enrollments', onEnrollment(ctx), { fromBeginning: true });
      await deps.transport.subscribeBatch(ReadingsTopic, READINGS_CONSUMER_GROUP, onReadings(ctx, config.TELEMETRY_BATCH_SIZE), {
        // Records, each holding many readings: onReadings cuts what it gets into parts of TELEMETRY_BATCH_SIZE readings.
        maxBatchSize: config.TELEMETRY_BATCH_SIZE,
        // The partition batches of a fetch are taken at once, for their readings to share transactions (WriteGroups).
        concurrency: config.TELEMETRY_CONSUMER_CONCURRENCY,
        // A fetch of a few hundred kilobytes (about a thousand readings) or what came in 200 ms:
        // under load fewer fetches and larger transactions, each paying its statements and commit
        // over more readings; when quiet at most 200 ms more lag.
        fetchMinBytes: 256 * 1024,
        fetchMaxWaitMs: 200,
        // A database outage should hold readings back, not dead-letter them: retry for about a minute.
        maxAttempts: 12,
        // A partition this group has never read starts at its beginning: readings answered OK
        // before this service first joined (a gateway upgraded or started first) are stored too;
        // writing them again is harmless (keyed by device and start).
        fromBeginning: true,
      });
      await deps.transport.serve('telemetry', operationRouter(TelemetryOperations, handlers, logger));
    },
    async stop() {
      clearInterval(timer);
    },
  };
}
