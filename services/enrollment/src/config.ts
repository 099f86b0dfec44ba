import { z } from 'zod';
import { parseConfig, positiveInt } from '@efs/config';

const EnrollmentEnv = z.object({
  /**
   * The longest the sandbox auto-approver sleeps: it runs when the next approval it knows of falls
   * due and after this process's own commits, so this bounds only how soon it finds what another
   * replica wrote.
   */
  ENROLLMENT_AUTO_APPROVE_POLL_MS: positiveInt(2000, 86_400_000),
  /** How long an enrollment waits for commissioning when its read model lags behind. */
  ENROLLMENT_COMMISSIONING_TIMEOUT_MS: positiveInt(3000),
});
export type EnrollmentConfig = z.infer<typeof EnrollmentEnv>;

export const parseEnrollmentConfig = (env: Record<string, string | undefined>): EnrollmentConfig => parseConfig(EnrollmentEnv, env);
