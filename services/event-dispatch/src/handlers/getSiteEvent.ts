import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { siteEvent, siteEventView } from './lookups.ts';

/** `GET /v1/site/{siteId}/event/{eventId}` (site token): an event that reaches the site; any other is 404. */
export const getSiteEvent = (ctx: Pick<DispatchContext, 'knex' | 'events' | 'commands' | 'clock'>) =>
  implement(DispatchOperations.getSiteEvent, async ({ params, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const row = await siteEvent(ctx, ctx.knex, integratorId, params.siteId, params.eventId);
    return siteEventView(ctx, integratorId, row);
  });
