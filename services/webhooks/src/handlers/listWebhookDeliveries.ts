import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { ownSubscription } from './lookups.ts';
import type { WebhooksContext } from '../context.ts';

/** `GET /v1/webhooks/{webhookId}/deliveries?status=`: each delivery with its attempts, oldest first. */
export const listWebhookDeliveries = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'deliveries'>) =>
  implement(WebhooksOperations.listWebhookDeliveries, async ({ params, query, principal }) => {
    const sub = await ownSubscription(ctx, tenantOf(principal), params.webhookId);
    return ctx.deliveries.list(ctx.knex, sub.id, query.status, query.skip, query.limit);
  });
