import { TelemetryOperations } from '@efs/api';
import { EnrollmentsTopic, ProgramsTopic, ReadingsTopic, retentionStart, type ReadingMessage } from '@efs/contracts';
import { GroupCommit, isDatabaseUnavailable, type ItemOutcome } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { TelemetryConfig } from './config.ts';
import { TELEMETRY_SCHEMA, type TelemetryContext } from './context.ts';
import { DAY_MS, daysBetween } from './domain/partitions.ts';
import { historicalTelemetry } from './handlers/historicalTelemetry.ts';
import { latestTelemetry } from './handlers/latestTelemetry.ts';
import { onEnrollment } from './handlers/onEnrollment.ts';
import { onProgram } from './handlers/onProgram.ts';
import { onReadings } from './handlers/onReadings.ts';
import { devicePerformance } from './handlers/devicePerformance.ts';
import { ingestMetrics } from './ingestMetrics.ts';
import { KnexCounterStore } from './store/counterStore.ts';
import { PartitionStore } from './store/partitionStore.ts';
import { KnexReadingStore } from './store/readingStore.ts';
import { ReadingWriter } from './store/readingWriter.ts';
import { KnexReadModelStore } from './store/readModelStore.ts';

/** The consumer group of the readings topic: its lag is what the deployment autoscales on. */
export const READINGS_CONSUMER_GROUP = 'efs-telemetry-reading-batches';

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
  const metrics = ingestMetrics();
  const write = async (batch: readonly ReadingMessage[]): Promise<void> => {
    await writer.write(batch);
    metrics.stored(batch, Date.now());
  };
  const writes = new GroupCommit<readonly ReadingMessage[], void>({
    // The partition batches handed in together (one fetch's, and what comes while a transaction
    // runs) share one transaction: each costs its statements, its commit and COPY's set-up on the
    // partitioned table whatever it carries (~0.6 ms of the Postgres backend measured, against
    // ~5 ms per 1,000 rows of COPY itself), and a batch per partition carried ~200 readings under load.
    writeAll: async (parts) => {
      await write(parts.flat());
      return parts.map((): ItemOutcome<void> => ({ ok: true, value: undefined }));
    },
    writeOne: (part) => write(part),
    // A group that failed on something of its own data is written again a part at a time, so only
    // the part that cannot be written fails (its batch retries and dead-letters as before); one
    // failing because the database is unreachable fails its parts at once (they retry with their
    // own backoff), not after a connection timeout each in turn.
    retryAlone: (err) => !isDatabaseUnavailable(err),
    // Bounded by readings, not parts: whole parts up to TELEMETRY_BATCH_SIZE readings (one larger part alone).
    maxItems: Number.POSITIVE_INFINITY,
    maxWeight: config.TELEMETRY_BATCH_SIZE,
    weightOf: (part) => part.length,
    // What one fetch brings beyond a transaction is written in parallel (each writer its own connection).
    writers: config.TELEMETRY_WRITERS,
    // kafkajs hands a fetch's partition batches to its workers together: one turn for them all to join.
    joinSameTurn: true,
  });
  const ctx: TelemetryContext = { knex, readings, readModels: new KnexReadModelStore(TELEMETRY_SCHEMA), writer, writes, logger };

  const handlers = bindHandlers(TelemetryOperations, ctx, {
    latestTelemetry,
    historicalTelemetry,
    devicePerformance,
  });

  // Partitions ahead are made; with a retention, days before it dropped (the gateway refuses their readings).
  const retentionDays = config.TELEMETRY_RETENTION_DAYS;
  const ahead = async () => {
    await partitions.ensure(daysBetween(Date.now() - DAY_MS, Date.now() + config.TELEMETRY_PARTITIONS_AHEAD_DAYS * DAY_MS));
    if (retentionDays !== undefined) await partitions.dropBefore(retentionStart(Date.now(), retentionDays));
  };
  let timer: NodeJS.Timeout | undefined;

  return {
    name: 'telemetry-ingest',
    context: ctx,
    async start() {
      await partitions.load();
      await ahead();
      timer = setInterval(() => void ahead().catch((err: Error) => logger.warn({ err }, 'partition maintenance failed; will retry')), config.TELEMETRY_MAINTENANCE_MS);
      timer.unref();
      await deps.transport.subscribe(ProgramsTopic, 'efs-telemetry-programs', onProgram(ctx), { fromBeginning: true });
      await deps.transport.subscribe(EnrollmentsTopic, 'efs-telemetry-enrollments', onEnrollment(ctx), { fromBeginning: true });
      await deps.transport.subscribeBatch(ReadingsTopic, READINGS_CONSUMER_GROUP, onReadings(ctx, config.TELEMETRY_BATCH_SIZE), {
        // Records, each holding many readings: onReadings cuts what it gets into parts of TELEMETRY_BATCH_SIZE readings.
        maxBatchSize: config.TELEMETRY_BATCH_SIZE,
        // The partition batches of a fetch are taken at once, for their readings to share transactions (ctx.writes).
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
