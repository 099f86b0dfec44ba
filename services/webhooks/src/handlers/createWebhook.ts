import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { checkEventTypes, tenantOf } from '../domain/tenant.ts';
import { checkDestination } from './lookups.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `POST /v1/webhooks`: a subscription, answered with its signing secret this once. */
export const createWebhook = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'client' | 'clock'>) =>
  implement(WebhooksOperations.createWebhook, async ({ body, principal }) => {
    const tenant = tenantOf(principal);
    const eventTypes = checkEventTypes(tenant, body.event_types ?? []);
    await checkDestination(ctx, body.url);
    const { row, secret } = await ctx.subscriptions.create(ctx.knex, tenant, { url: body.url, eventTypes, description: body.description ?? null }, ctx.clock());
    return { ...toApiWebhook(row), secret };
  });
