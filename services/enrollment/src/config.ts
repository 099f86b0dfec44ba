import { z } from 'zod';
import { parseConfig } from '@efs/config';

const EnrollmentEnv = z.object({});
export type EnrollmentConfig = z.infer<typeof EnrollmentEnv>;

export const parseEnrollmentConfig = (env: Record<string, string | undefined>): EnrollmentConfig => parseConfig(EnrollmentEnv, env);
