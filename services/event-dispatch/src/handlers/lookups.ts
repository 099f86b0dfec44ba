import type { SiteEventType } from '@efs/api';
import type { Knex } from '@efs/db';
import { Errors } from '@efs/errors';
import type { DispatchContext } from '../context.ts';
import { toSiteEvent, type DrEvent, type EventSiteRow } from '../domain/event.ts';
import type { ProgramView } from '../store/readModelStore.ts';

/** The program, if it is the utility's own; another utility's program is answered as unknown. */
export async function ownProgram(ctx: Pick<DispatchContext, 'knex' | 'readModels'>, utilityId: string, programId: string): Promise<ProgramView> {
  const program = await ctx.readModels.getProgram(ctx.knex, programId);
  if (!program || program.utility_id !== utilityId) throw Errors.NOT_FOUND(`Program ${programId} not found`);
  return program;
}

/** The event, if it is one of the utility's programs'; locked when asked. */
export async function ownEvent(ctx: Pick<DispatchContext, 'events'>, db: Knex, utilityId: string, id: string, forUpdate = false): Promise<DrEvent> {
  const e = await ctx.events.find(db, id, { utilityId }, { forUpdate });
  if (!e) throw Errors.NOT_FOUND(`Event ${id} not found`);
  return e;
}

/** The event and the site's participation, if the event reaches the site; locked when asked. */
export async function siteEvent(ctx: Pick<DispatchContext, 'events'>, db: Knex, integratorId: string, siteId: string, eventId: string, forUpdate = false): Promise<{ event: DrEvent; site: EventSiteRow }> {
  const site = await ctx.events.findSite(db, eventId, integratorId, siteId, { forUpdate });
  const event = site ? await ctx.events.find(db, eventId) : undefined;
  if (!site || !event) throw Errors.NOT_FOUND(`Event ${eventId} not found for site ${siteId}`);
  return { event, site };
}

/** One site's events as its end user sees them, their commands read in one query. */
export async function siteEventViews(ctx: Pick<DispatchContext, 'knex' | 'commands' | 'clock'>, integratorId: string, rows: readonly { event: DrEvent; site: EventSiteRow }[]): Promise<SiteEventType[]> {
  const now = ctx.clock();
  const siteId = rows[0]?.site.site_id;
  if (siteId === undefined) return [];
  const commands = await ctx.commands.forSiteInEvents(ctx.knex, integratorId, siteId, rows.map((r) => r.event.id));
  return rows.map(({ event, site }) => toSiteEvent(event, site, commands.filter((c) => c.event_id === event.id), now));
}

/** One event of one site as its end user sees it. */
export async function siteEventView(ctx: Pick<DispatchContext, 'knex' | 'commands' | 'clock'>, integratorId: string, row: { event: DrEvent; site: EventSiteRow }): Promise<SiteEventType> {
  return (await siteEventViews(ctx, integratorId, [row]))[0]!;
}
