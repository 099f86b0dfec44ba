import { Errors } from '@efs/errors';
import type { Tenant } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';
import type { SubscriptionRow } from '../store/subscriptionStore.ts';

/** The tenant's subscription, or 404 (another tenant's reads as unknown). */
export async function ownSubscription(ctx: Pick<WebhooksContext, 'knex' | 'subscriptions'>, tenant: Tenant, id: string): Promise<SubscriptionRow> {
  const row = await ctx.subscriptions.get(ctx.knex, tenant, id);
  if (!row) throw Errors.NOT_FOUND(`Webhook ${id} not found`);
  return row;
}

/** Refuses (400, naming `url`) a destination the SSRF rules do not allow. */
export async function checkDestination(ctx: Pick<WebhooksContext, 'client'>, url: string): Promise<void> {
  const r = await ctx.client.resolve(new URL(url));
  if ('refused' in r) throw Errors.VALIDATION_ERROR.forField(`This destination is refused: ${r.refused}`, ['url']);
}
