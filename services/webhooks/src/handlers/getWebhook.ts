import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { ownSubscription } from './lookups.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `GET /v1/webhooks/{webhookId}`. */
export const getWebhook = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions'>) =>
  implement(WebhooksOperations.getWebhook, async ({ params, principal }) => toApiWebhook(await ownSubscription(ctx, tenantOf(principal), params.webhookId)));
