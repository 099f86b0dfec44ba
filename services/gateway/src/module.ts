import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseGatewayConfig, type GatewayConfig } from './config.ts';
import { AUTH_SCHEMA, createGatewayService, type GatewayService } from './service.ts';

export const gateway: ServiceModule<GatewayConfig, GatewayService> = {
  name: 'gateway',
  schema: AUTH_SCHEMA,
  migrations,
  config: parseGatewayConfig,
  create: createGatewayService,
};
