import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { commandStatus, phaseDueAt, toApiCommand } from '../domain/command.ts';
import { isModifiable, statusAt } from '../domain/eventStatus.ts';
import { siteEvent } from './lookups.ts';

/**
 * `PATCH /v1/site/{siteId}/dispatch/{id}` `{is_participating}` (legacy, site token): opts out of
 * that one command (OPT_OUT) or back in; the site's choice for the whole event still applies. 409
 * EVENT_NOT_MODIFIABLE once the event is no longer UPCOMING or IN_PROGRESS (or the command ended).
 */
export const updateDispatch = (ctx: Pick<DispatchContext, 'knex' | 'events' | 'commands' | 'commandWriter' | 'clock'>) =>
  implement(DispatchOperations.updateDispatch, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const command = await ctx.knex.transaction(async (trx) => {
      const now = ctx.clock();
      const scope = { integratorId, siteId: params.siteId };
      const found = await ctx.commands.find(trx, params.dispatchId, scope);
      if (!found) throw Errors.NOT_FOUND(`Dispatch ${params.dispatchId} not found`);
      // The site's participation first, then the command: the order a PATCH of the site's event locks them in.
      const { event, site } = await siteEvent(ctx, trx, integratorId, params.siteId, found.event_id, true);
      const c = (await ctx.commands.find(trx, params.dispatchId, scope, { forUpdate: true }))!;
      const status = statusAt(event, now);
      if (!isModifiable(status) || c.ends_at.getTime() <= now.getTime()) throw Errors.EVENT_NOT_MODIFIABLE(`Dispatch ${c.id} has ended or its event is ${status}; it can no longer be changed`);
      const next = { ...c, opted_out: !body.is_participating };
      next.status = commandStatus(next, site.is_participating);
      next.phase_due_at = phaseDueAt(next);
      if (next.opted_out === c.opted_out && next.status === c.status) return c;
      next.updated_at = now;
      await ctx.commandWriter.update(trx, [next]);
      return next;
    });
    return toApiCommand(command);
  });
