import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { announceCommissioningState } from './announceState.ts';
import { parseCommissioningConfig, type CommissioningConfig } from './config.ts';
import { COMMISSIONING_SCHEMA } from './context.ts';
import { createCommissioningService } from './service.ts';

export const commissioningModule: ServiceModule<CommissioningConfig> = {
  name: 'commissioning',
  schema: COMMISSIONING_SCHEMA,
  migrations,
  config: parseCommissioningConfig,
  announceState: announceCommissioningState,
  create: createCommissioningService,
};
