import { z } from 'zod';
import { parseConfig } from '@efs/config';

const DispatchEnv = z.object({});
export type DispatchConfig = z.infer<typeof DispatchEnv>;

export const parseDispatchConfig = (env: Record<string, string | undefined>): DispatchConfig => parseConfig(DispatchEnv, env);
