import { z } from 'zod';
import { parseConfig } from '@efs/config';

const TelemetryEnv = z.object({});
export type TelemetryConfig = z.infer<typeof TelemetryEnv>;

export const parseTelemetryConfig = (env: Record<string, string | undefined>): TelemetryConfig => parseConfig(TelemetryEnv, env);
