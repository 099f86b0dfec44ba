import { WebhooksOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { checkEventTypes, tenantOf } from '../domain/tenant.ts';
import { checkDestination } from './lookups.ts';
import { toApiWebhook } from '../store/subscriptionStore.ts';
import type { WebhooksContext } from '../context.ts';

/** `PATCH /v1/webhooks/{webhookId}`: a new address or kinds; `enabled: true` re-enables a disabled endpoint, whose queue then flows again. */
export const updateWebhook = (ctx: Pick<WebhooksContext, 'knex' | 'subscriptions' | 'client' | 'worker' | 'clock'>) =>
  implement(WebhooksOperations.updateWebhook, async ({ params, body, principal }) => {
    const tenant = tenantOf(principal);
    const eventTypes = body.event_types === undefined ? undefined : checkEventTypes(tenant, body.event_types);
    if (body.url !== undefined) await checkDestination(ctx, body.url);
    const row = await ctx.subscriptions.update(ctx.knex, tenant, params.webhookId, { ...(body.url !== undefined ? { url: body.url } : {}), ...(eventTypes ? { eventTypes } : {}), ...(body.enabled !== undefined ? { enabled: body.enabled } : {}) }, ctx.clock());
    if (!row) throw Errors.NOT_FOUND(`Webhook ${params.webhookId} not found`);
    if (row.enabled) ctx.worker.wake();
    return toApiWebhook(row);
  });
