import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { DeliveryWorker } from './handlers/deliveryWorker.ts';
import type { EndpointClient } from './handlers/endpointClient.ts';
import type { RetentionSweeper } from './handlers/retentionSweeper.ts';
import type { KnexDeliveryStore } from './store/deliveryStore.ts';
import type { KnexMessageStore } from './store/messageStore.ts';
import type { KnexReadModelStore } from './store/readModelStore.ts';
import type { KnexSubscriptionStore } from './store/subscriptionStore.ts';

/** The Postgres schema of the webhooks service's tables. */
export const WEBHOOKS_SCHEMA = 'webhooks';

/**
 * What the webhooks service's parts are built from (in service.ts); each handler takes the few of
 * them it uses (`Pick<WebhooksContext, ...>`).
 */
export interface WebhooksContext {
  knex: Knex;
  subscriptions: KnexSubscriptionStore;
  messages: KnexMessageStore;
  deliveries: KnexDeliveryStore;
  readModels: KnexReadModelStore;
  client: EndpointClient;
  worker: DeliveryWorker;
  retention: RetentionSweeper;
  clock: Clock;
  logger: Logger;
}
