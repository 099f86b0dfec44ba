import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseDispatchConfig, type DispatchConfig } from './config.ts';
import { DISPATCH_SCHEMA, createDispatchService } from './service.ts';

export const dispatchModule: ServiceModule<DispatchConfig> = {
  name: 'event-dispatch',
  schema: DISPATCH_SCHEMA,
  migrations,
  config: parseDispatchConfig,
  create: createDispatchService,
};
