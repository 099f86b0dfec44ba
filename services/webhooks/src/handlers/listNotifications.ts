import { WebhooksOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { tenantOf } from '../domain/tenant.ts';
import type { WebhooksContext } from '../context.ts';

/** `GET /v1/notifications?after=&limit=`: the messages webhooks carry to the caller, oldest first, each with its webhook-id and cursor. */
export const listNotifications = (ctx: Pick<WebhooksContext, 'knex' | 'messages'>) =>
  implement(WebhooksOperations.listNotifications, async ({ query, principal }) => ctx.messages.feed(ctx.knex, tenantOf(principal), query.after, query.limit));
