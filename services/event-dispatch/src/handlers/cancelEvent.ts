import { utilityOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiEvent } from '../domain/event.ts';
import { statusAt } from '../domain/eventStatus.ts';
import { ownEvent } from './lookups.ts';

/**
 * `DELETE {utility_base_url}/v1/events/{id}`: cancels an UPCOMING or IN_PROGRESS event and every
 * command of it that has not ended (event.canceled, command.canceled); answers the event, now
 * CANCELED. Canceling it again answers it unchanged; a COMPLETED event is 409 EVENT_NOT_MODIFIABLE.
 */
export const cancelEvent = (ctx: Pick<DispatchContext, 'knex' | 'events' | 'eventWriter' | 'clock'>) =>
  implement(DispatchOperations.cancelEvent, async ({ params, principal }) => {
    const utilityId = utilityOf(principal);
    const now = ctx.clock();
    const e = await ctx.knex.transaction(async (trx) => {
      const current = await ctx.eventWriter.advance(trx, await ownEvent(ctx, trx, utilityId, params.id, true), now);
      const status = statusAt(current, now);
      if (status === 'CANCELED') return current;
      if (status === 'COMPLETED') throw Errors.EVENT_NOT_MODIFIABLE(`Event ${current.id} has completed; it can no longer be canceled`);
      return ctx.eventWriter.cancel(trx, current, now);
    });
    return toApiEvent(e, now);
  });
