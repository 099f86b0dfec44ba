import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { isModifiable, statusAt } from '../domain/eventStatus.ts';
import { planParticipation, requestedLevels } from '../domain/participation.ts';
import { siteEvent, siteEventView } from './lookups.ts';

/**
 * `PATCH /v1/site/{siteId}/event/{eventId}` (site token): opt the site out of the event (or back
 * in) and set the reserve for this event only. The site's commands that have not ended follow
 * (OPT_OUT or OK, the new effective reserve), updated in place and announced (command.updated).
 * 400 for a device not in the event or a level below the program's minimum; 409
 * EVENT_NOT_MODIFIABLE unless the event is UPCOMING or IN_PROGRESS.
 */
export const updateSiteEvent = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'events' | 'commands' | 'commandWriter' | 'clock'>) =>
  implement(DispatchOperations.updateSiteEvent, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const row = await ctx.knex.transaction(async (trx) => {
      const now = ctx.clock();
      const { event, site } = await siteEvent(ctx, trx, integratorId, params.siteId, params.eventId, true);
      const commands = await ctx.commands.forSiteInEvent(trx, event.id, integratorId, params.siteId, { forUpdate: true });
      const deviceIds = [...new Set(commands.map((c) => c.device_id))];
      const levels = requestedLevels(body, deviceIds, event.minimum_reserve_percentage);
      const status = statusAt(event, now);
      if (!isModifiable(status)) throw Errors.EVENT_NOT_MODIFIABLE(`Event ${event.id} is ${status}; participation can change only while it is UPCOMING or IN_PROGRESS`);
      const participating = body.is_participating ?? site.is_participating;
      const changed = planParticipation(commands, {
        siteParticipating: participating,
        levels,
        programMinimum: event.minimum_reserve_percentage,
        deviceLevels: await ctx.readModels.deviceLevels(trx, integratorId, params.siteId, deviceIds),
        now,
      });
      const nextSite = participating === site.is_participating ? site : { ...site, is_participating: participating, updated_at: now };
      if (nextSite !== site) await ctx.events.updateSite(trx, nextSite);
      await ctx.commandWriter.update(trx, changed);
      return { event, site: nextSite };
    });
    return siteEventView(ctx, integratorId, row);
  });
