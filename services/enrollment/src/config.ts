import { z } from 'zod';
import { parseConfig, positiveInt } from '@efs/config';

const EnrollmentEnv = z.object({
  /** How often the sandbox auto-approval looks for due PENDING enrollments. */
  ENROLLMENT_AUTO_APPROVE_POLL_MS: positiveInt(250),
  /** How long an enrollment waits for commissioning when its read model lags behind. */
  ENROLLMENT_COMMISSIONING_TIMEOUT_MS: positiveInt(3000),
});
export type EnrollmentConfig = z.infer<typeof EnrollmentEnv>;

export const parseEnrollmentConfig = (env: Record<string, string | undefined>): EnrollmentConfig => parseConfig(EnrollmentEnv, env);
