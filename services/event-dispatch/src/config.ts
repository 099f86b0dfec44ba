import { z } from 'zod';
import { parseConfig, positiveInt } from '@efs/config';

const DispatchEnv = z.object({
  /** How often events move by time and commands are announced as started and ended (statuses move within it). */
  DISPATCH_SCHEDULER_POLL_MS: positiveInt(200),
  /** Events reaching at most this many devices get their commands within the creating request; larger ones right after it. */
  DISPATCH_INLINE_FAN_OUT_MAX: positiveInt(1000),
  /** Outbox rows published per broker round trip (a fan-out announces one command.created per command). */
  DISPATCH_OUTBOX_BATCH: positiveInt(1000),
  /** How long an event's sites wait for telemetry-ingest's delivered figures (503 without them); below the gateway's REQUEST_TIMEOUT_MS. */
  DISPATCH_TELEMETRY_TIMEOUT_MS: positiveInt(2500),
});
export type DispatchConfig = z.infer<typeof DispatchEnv>;

export const parseDispatchConfig = (env: Record<string, string | undefined>): DispatchConfig => parseConfig(DispatchEnv, env);
