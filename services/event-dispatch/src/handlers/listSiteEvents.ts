import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { statusConditions } from '../domain/eventStatus.ts';
import { siteEventViews } from './lookups.ts';

/** `GET /v1/site/{siteId}/events?status=` (site token, repeatable status): the events reaching the site, newest `starts_at` first. */
export const listSiteEvents = (ctx: Pick<DispatchContext, 'knex' | 'events' | 'commands' | 'clock'>) =>
  implement(DispatchOperations.listSiteEvents, async ({ params, query, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const rows = await ctx.events.listForSite(ctx.knex, integratorId, params.siteId, {
      statuses: query.status === undefined ? undefined : statusConditions(query.status, ctx.clock()),
      skip: query.skip,
      limit: query.limit,
    });
    return await siteEventViews(ctx, integratorId, rows);
  });
