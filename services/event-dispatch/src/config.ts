import { z } from 'zod';
import { parseConfig, positiveInt } from '@efs/config';

const DispatchEnv = z.object({
  /**
   * The longest the scheduler sleeps: it runs when the next transition it knows of falls due and
   * when this process commits an event or commands, so this bounds only how soon it finds what
   * another replica or the CLI wrote (and what that replica would have applied had it not stopped).
   */
  DISPATCH_SCHEDULER_POLL_MS: positiveInt(2000, 86_400_000),
  /** Events reaching at most this many devices get their commands within the creating request; larger ones right after it. */
  DISPATCH_INLINE_FAN_OUT_MAX: positiveInt(1000),
  /** Outbox rows published per broker round trip (a fan-out announces one command.created per command). */
  DISPATCH_OUTBOX_BATCH: positiveInt(1000),
  /** How long an event's sites wait for telemetry-ingest's delivered figures (503 without them); below the gateway's REQUEST_TIMEOUT_MS. */
  DISPATCH_TELEMETRY_TIMEOUT_MS: positiveInt(2500),
});
export type DispatchConfig = z.infer<typeof DispatchEnv>;

export const parseDispatchConfig = (env: Record<string, string | undefined>): DispatchConfig => parseConfig(DispatchEnv, env);
