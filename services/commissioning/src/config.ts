import { z } from 'zod';
import { parseConfig } from '@efs/config';

const CommissioningEnv = z.object({});
export type CommissioningConfig = z.infer<typeof CommissioningEnv>;

export const parseCommissioningConfig = (env: Record<string, string | undefined>): CommissioningConfig => parseConfig(CommissioningEnv, env);
