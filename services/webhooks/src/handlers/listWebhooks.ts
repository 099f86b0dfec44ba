import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `GET /v1/webhooks`: the caller's subscriptions, oldest first. */
export const listWebhooks = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions'>) =>
  implement(WebhooksOperations.listWebhooks, async ({ query, principal }) => {
    const rows = await ctx.subscriptions.list(ctx.knex, tenantOf(principal), query.skip, query.limit);
    return rows.map(toApiWebhook);
  });
