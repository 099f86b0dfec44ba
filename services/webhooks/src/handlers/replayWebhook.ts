import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { ownSubscription } from './lookups.ts';
import type { WebhooksContext } from '../context.ts';

/** `POST /v1/webhooks/{webhookId}/replay {since}`: every message whose delivery failed since then, sent again. */
export const replayWebhook = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'deliveries' | 'worker' | 'clock'>) =>
  implement(WebhooksOperations.replayWebhook, async ({ params, body, principal }) => {
    const sub = await ownSubscription(ctx, tenantOf(principal), params.webhookId);
    const replayed = await ctx.deliveries.replayFailedSince(ctx.knex, sub.id, new Date(body.since), ctx.clock());
    if (replayed > 0) ctx.worker.wake();
    return { replayed };
  });
