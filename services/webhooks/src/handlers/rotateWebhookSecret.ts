import { WebhooksOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `POST /v1/webhooks/{webhookId}/rotate-secret`: a new secret, shown this once; the old one signs beside it for 24 hours. */
export const rotateWebhookSecret = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'clock'>) =>
  implement(WebhooksOperations.rotateWebhookSecret, async ({ params, principal }) => {
    const rotated = await ctx.subscriptions.rotate(ctx.knex, tenantOf(principal), params.webhookId, ctx.clock());
    if (!rotated) throw Errors.NOT_FOUND(`Webhook ${params.webhookId} not found`);
    return { ...toApiWebhook(rotated.row), secret: rotated.secret };
  });
