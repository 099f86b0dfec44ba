import type { ReadingMessage } from '@efs/contracts';
import type { GroupCommit, Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { ReadingStore } from './store/readingStore.ts';
import type { ReadingWriter } from './store/readingWriter.ts';
import type { ReadModelStore } from './store/readModelStore.ts';

/** The Postgres schema of telemetry-ingest's tables. */
export const TELEMETRY_SCHEMA = 'telemetry';

/**
 * What telemetry-ingest's parts are built from (in service.ts); each handler takes the few of
 * them it uses (`Pick<TelemetryContext, ...>`).
 */
export interface TelemetryContext {
  knex: Knex;
  readings: ReadingStore;
  readModels: ReadModelStore;
  writer: ReadingWriter;
  /** The writer's transactions, shared by the partition batches consumed at the same time. */
  writes: GroupCommit<readonly ReadingMessage[], void>;
  logger: Logger;
}
