import { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment once at boot against a zod schema; a bad value stops the process with
 * a message naming every offending variable. Nothing below a service's config.ts reads process.env.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

const emptyToUndefined = (v: unknown) => (v === '' ? undefined : v);

/** An optional string variable where an empty value counts as unset. */
export const optionalString = () => z.preprocess(emptyToUndefined, z.string().optional());

export const port = (fallback: number) => z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).default(fallback));

/** A positive integer variable, at most `max` when given. */
export const positiveInt = (fallback: number, max = Number.MAX_SAFE_INTEGER) => z.preprocess(emptyToUndefined, z.coerce.number().int().positive().max(max).default(fallback));

/** An optional positive integer variable (empty counts as unset), at most `max`. */
export const optionalPositiveInt = (max = Number.MAX_SAFE_INTEGER) => z.preprocess(emptyToUndefined, z.coerce.number().int().positive().max(max).optional());

export const bool = (fallback: boolean) =>
  z.preprocess((v) => (v === undefined || v === '' ? fallback : ['1', 'true', 'yes', 'on'].includes(String(v).toLowerCase())), z.boolean());

/** Variables every service shares: where the infrastructure is and how to log. */
export const commonEnv = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Bytes of log lines held for a reader of stdout that has fallen behind (a full pipe); past it
   * lines are dropped and counted, and a warning line says how many once the reader is back.
   * 4 MiB by default, as createLogger's own default.
   */
  LOG_BUFFER_MAX_BYTES: positiveInt(4 * 1024 * 1024, 1024 * 1024 * 1024),
  /** Comma-separated Kafka bootstrap servers; unset means the in-process transport. */
  KAFKA_BROKERS: optionalString(),
  SCHEMA_REGISTRY_URL: z.preprocess(emptyToUndefined, z.string().url().default('http://127.0.0.1:8085/apis/ccompat/v7')),
  KAFKA_CLIENT_ID: z.preprocess(emptyToUndefined, z.string().default('efs')),
  /** Prefixed to every topic, consumer group and schema subject (several deployments on one cluster). */
  KAFKA_TOPIC_PREFIX: z.preprocess(emptyToUndefined, z.string().regex(/^[a-zA-Z0-9._-]*$/).default('')),
  /**
   * How often read models (idempotent event consumers) commit their Kafka offsets while messages
   * flow; 0 commits after every batch. A process that dies has up to this much handled again.
   */
  KAFKA_EVENT_COMMIT_INTERVAL_MS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(60_000).default(1000)),
  /** Postgres connection string; unset means embedded PGlite under DATA_DIR. */
  DATABASE_URL: optionalString(),
  DATA_DIR: z.preprocess(emptyToUndefined, z.string().default('.data')),
  /**
   * Embedded PGlite only: how often tables past autovacuum's default thresholds are vacuumed or
   * analyzed (PGlite has no autovacuum); 0 never.
   */
  EMBEDDED_VACUUM_INTERVAL_MS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(3_600_000).default(10_000)),
  /** Milliseconds the gateway waits for a service's reply before answering 503. */
  REQUEST_TIMEOUT_MS: positiveInt(5000),
  /**
   * Partitions of the telemetry readings topic: the most telemetry-ingest replicas that can
   * consume at once. Raising it adds partitions at the next start; it never shrinks.
   */
  TELEMETRY_PARTITIONS: positiveInt(12),
};

export const CommonEnv = z.object(commonEnv);
export type CommonConfig = z.infer<typeof CommonEnv>;
