import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseWebhooksConfig, type WebhooksConfig } from './config.ts';
import { WEBHOOKS_SCHEMA } from './context.ts';
import { createWebhooksService, type WebhooksService } from './service.ts';

export const webhooksModule: ServiceModule<WebhooksConfig, WebhooksService> = {
  name: 'webhooks',
  schema: WEBHOOKS_SCHEMA,
  migrations,
  config: parseWebhooksConfig,
  create: createWebhooksService,
};

export type { WebhooksService } from './service.ts';
