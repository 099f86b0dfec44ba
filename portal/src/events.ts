/** The end user's view of demand-response events (decisions.md, Demand-response events), typed by the site event API's schema. */
import type { SiteEventType } from '@efs/api';

/** Participation can change only while the event has not ended (otherwise 409 EVENT_NOT_MODIFIABLE). */
export const isModifiable = (e: Pick<SiteEventType, 'status'>) => e.status === 'UPCOMING' || e.status === 'IN_PROGRESS';

/** Upcoming and running events soonest first; past ones newest first. */
export function splitEvents(events: readonly SiteEventType[]): { upcoming: SiteEventType[]; past: SiteEventType[] } {
  const by = (a: SiteEventType, b: SiteEventType) => Date.parse(a.starts_at) - Date.parse(b.starts_at);
  return {
    upcoming: events.filter(isModifiable).sort(by),
    past: events.filter((e) => !isModifiable(e)).sort((a, b) => by(b, a)),
  };
}

/** The event-specific reserve the site set (the same for its devices when set with the site-wide field). */
export function eventReserve(e: Pick<SiteEventType, 'device_settings'>): number | null {
  const levels = e.device_settings.map((d) => d.backup_reserve_percentage).filter((v): v is number => v !== null);
  return levels.length > 0 ? Math.max(...levels) : null;
}
