import { utilityOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../service.ts';
import type { Command } from '../domain/command.ts';
import { expectedPerformance } from '../domain/performance.ts';
import { ownEvent } from '../store/lookups.ts';
import { deviceRef } from '../store/readModelStore.ts';

/**
 * `GET {utility_base_url}/v1/events/{id}/sites`: every site the event reaches, with its
 * participation and expected performance (the actual figures stay null until telemetry covers
 * the event).
 */
export const listEventSites = (ctx: DispatchContext) =>
  implement(DispatchOperations.listEventSites, async ({ params, query, principal }) => {
    const e = await ownEvent(ctx, ctx.knex, utilityOf(principal), params.id);
    const sites = await ctx.events.listSites(ctx.knex, e.id, query.skip, query.limit);
    const commands = await ctx.commands.forSitesInEvent(ctx.knex, e.id, sites);
    const capacities = await ctx.readModels.capacities(ctx.knex, commands);
    const bySite = new Map<string, Command[]>();
    for (const c of commands) bySite.set(`${c.integrator_id}/${c.site_id}`, [...(bySite.get(`${c.integrator_id}/${c.site_id}`) ?? []), c]);
    const duration = (e.ends_at.getTime() - e.starts_at.getTime()) / 1000;
    return sites.map((s) => {
      const expected = expectedPerformance(
        (bySite.get(`${s.integrator_id}/${s.site_id}`) ?? []).map((c) => ({
          participating: c.status === 'OK',
          setpoint_w: c.setpoint_w,
          duration_s: (c.ends_at.getTime() - c.starts_at.getTime()) / 1000,
          capacity_wh: capacities.get(deviceRef(c)) ?? null,
        })),
        duration,
      );
      return {
        site_id: s.site_id,
        is_participating: s.is_participating,
        performance_expected_energy_wh: expected.energy_wh,
        performance_actual_energy_wh: null,
        performance_expected_power_w: expected.power_w,
        performance_actual_power_w: null,
      };
    });
  });
