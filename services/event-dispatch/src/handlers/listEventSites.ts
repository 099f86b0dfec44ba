import { utilityOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import type { Command } from '../domain/command.ts';
import { actualPerformance, expectedPerformance } from '../domain/performance.ts';
import { ownEvent } from './lookups.ts';
import { deviceRef } from '../store/readModelStore.ts';

/**
 * `GET {utility_base_url}/v1/events/{id}/sites`: every site the event reaches, with its
 * participation, its expected performance (from its commands) and its actual performance (from
 * telemetry inside its commands' windows, asked of telemetry-ingest for the page's devices in one
 * call; null until telemetry covers the event).
 */
export const listEventSites = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'events' | 'commands' | 'delivered'>) =>
  implement(DispatchOperations.listEventSites, async ({ params, query, principal }) => {
    const e = await ownEvent(ctx, ctx.knex, utilityOf(principal), params.id);
    const sites = await ctx.events.listSites(ctx.knex, e.id, query.skip, query.limit);
    const commands = await ctx.commands.forSitesInEvent(ctx.knex, e.id, sites);
    const [capacities, delivered] = await Promise.all([ctx.readModels.capacities(ctx.knex, commands), ctx.delivered.of(commands)]);
    const siteRef = (x: { integrator_id: string; site_id: string }) => `${x.integrator_id}\u0000${x.site_id}`;
    const bySite = new Map<string, Command[]>();
    for (const c of commands) {
      const key = siteRef(c);
      const list = bySite.get(key);
      if (list) list.push(c);
      else bySite.set(key, [c]);
    }
    const duration = (e.ends_at.getTime() - e.starts_at.getTime()) / 1000;
    return sites.map((s) => {
      const own = bySite.get(siteRef(s)) ?? [];
      const expected = expectedPerformance(
        own.map((c) => ({
          participating: c.status === 'OK',
          setpoint_w: c.setpoint_w,
          duration_s: (c.ends_at.getTime() - c.starts_at.getTime()) / 1000,
          capacity_wh: capacities.get(deviceRef(c)) ?? null,
        })),
        duration,
      );
      const actual = actualPerformance([...new Set(own.map(deviceRef))].map((d) => delivered.get(d) ?? null), duration);
      return {
        site_id: s.site_id,
        is_participating: s.is_participating,
        performance_expected_energy_wh: expected.energy_wh,
        performance_actual_energy_wh: actual.energy_wh,
        performance_expected_power_w: expected.power_w,
        performance_actual_power_w: actual.power_w,
      };
    });
  });
