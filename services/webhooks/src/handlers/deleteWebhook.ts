import { WebhooksOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `DELETE /v1/webhooks/{webhookId}`: the subscription and its queue are gone; answers it as it was. */
export const deleteWebhook = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions'>) =>
  implement(WebhooksOperations.deleteWebhook, async ({ params, principal }) => {
    const row = await ctx.subscriptions.delete(ctx.knex, tenantOf(principal), params.webhookId);
    if (!row) throw Errors.NOT_FOUND(`Webhook ${params.webhookId} not found`);
    return toApiWebhook(row);
  });
