import { utilityOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiEvent } from '../domain/event.ts';
import { statusConditions } from '../domain/eventStatus.ts';
import { ownProgram } from './lookups.ts';

/** `GET {utility_base_url}/v1/events?program_id=&status=`: the utility's events, newest `starts_at` first. */
export const listEvents = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'events' | 'clock'>) =>
  implement(DispatchOperations.listEvents, async ({ query, principal }) => {
    const utilityId = utilityOf(principal);
    if (query.program_id !== undefined) await ownProgram(ctx, utilityId, query.program_id);
    const now = ctx.clock();
    const list = await ctx.events.listForUtility(ctx.knex, utilityId, {
      programId: query.program_id,
      statuses: query.status === undefined ? undefined : statusConditions(query.status, now),
      skip: query.skip,
      limit: query.limit,
    });
    return list.map((e) => toApiEvent(e, now));
  });
