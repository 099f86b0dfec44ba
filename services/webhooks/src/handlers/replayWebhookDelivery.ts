import { WebhooksOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { ownSubscription } from './lookups.ts';
import type { WebhooksContext } from '../context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `POST /v1/webhooks/{webhookId}/deliveries/{deliveryId}/replay`: the message sent again (same webhook-id), as a new delivery. */
export const replayWebhookDelivery = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'deliveries' | 'worker' | 'clock'>) =>
  implement(WebhooksOperations.replayWebhookDelivery, async ({ params, principal }) => {
    const sub = await ownSubscription(ctx, tenantOf(principal), params.webhookId);
    const id = UUID.test(params.deliveryId) ? await ctx.deliveries.replayOne(ctx.knex, sub.id, params.deliveryId, ctx.clock()) : null;
    if (!id) throw Errors.NOT_FOUND(`Delivery ${params.deliveryId} not found`);
    ctx.worker.wake();
    return (await ctx.deliveries.get(ctx.knex, sub.id, id))!;
  });
