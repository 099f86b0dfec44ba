import { z } from 'zod';
import { optionalPositiveInt, parseConfig, positiveInt } from '@efs/config';

const TelemetryEnv = z.object({
  /** Most readings written in one transaction (a consumed partition batch is cut to this; batches consumed together share one up to this). */
  TELEMETRY_BATCH_SIZE: positiveInt(5000),
  /**
   * Readings-topic partition batches one replica takes at the same time; their readings are
   * written together (GroupCommit, joinSameTurn). At least the partitions a replica reads, so that a fetch's
   * batches share transactions.
   */
  TELEMETRY_CONSUMER_CONCURRENCY: positiveInt(16),
  /** Transactions (and connections) one replica writes readings with at the same time. */
  TELEMETRY_WRITERS: positiveInt(2),
  /** Day partitions kept created ahead of today. */
  TELEMETRY_PARTITIONS_AHEAD_DAYS: positiveInt(7),
  /** How often partitions ahead are created and, with a retention, old days dropped. */
  TELEMETRY_MAINTENANCE_MS: positiveInt(3_600_000),
  /**
   * Days of readings kept before today (the gateway reads it too, and refuses older readings);
   * older day partitions are dropped at each maintenance pass. Unset: readings are kept for ever.
   */
  TELEMETRY_RETENTION_DAYS: optionalPositiveInt(36_600),
});
export type TelemetryConfig = z.infer<typeof TelemetryEnv>;

export const parseTelemetryConfig = (env: Record<string, string | undefined>): TelemetryConfig => parseConfig(TelemetryEnv, env);
