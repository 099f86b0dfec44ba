import { z } from 'zod';
import { parseConfig, positiveInt } from '@efs/config';

const CommissioningEnv = z.object({
  /** How long commissioning waits for the catalog's eligible programs (nothing is stored without them). */
  COMMISSIONING_CATALOG_TIMEOUT_MS: positiveInt(2000),
  /**
   * How long a commission waits to learn that the read model of the programs topic is up to date
   * (the topic's end offsets, and the model reaching them) before it asks the catalog instead.
   */
  COMMISSIONING_PROGRAMS_CATCH_UP_MS: positiveInt(1000),
  /** How long commissioning waits for enrollment to create an auto-enrollment before answering without one. */
  COMMISSIONING_ENROLLMENT_TIMEOUT_MS: positiveInt(2500),
  /** How long a device update with `settings` waits for event-dispatch to create the settings request (503 without it, nothing changed). */
  COMMISSIONING_DISPATCH_TIMEOUT_MS: positiveInt(2500),
});
export type CommissioningConfig = z.infer<typeof CommissioningEnv>;

export const parseCommissioningConfig = (env: Record<string, string | undefined>): CommissioningConfig => parseConfig(CommissioningEnv, env);
