import { utilityOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiEvent } from '../domain/event.ts';
import { ownEvent } from './lookups.ts';

/** `GET {utility_base_url}/v1/events/{id}`. */
export const getEvent = (ctx: Pick<DispatchContext, 'knex' | 'events' | 'clock'>) =>
  implement(DispatchOperations.getEvent, async ({ params, principal }) => {
    const e = await ownEvent(ctx, ctx.knex, utilityOf(principal), params.id);
    return toApiEvent(e, ctx.clock());
  });
