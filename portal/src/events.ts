/**
 * The end user's view of a demand-response event (decisions.md, Demand-response events). The
 * event API is built on another branch; these shapes follow decisions.md until its schema is in
 * libs/api, where this file's types should then come from.
 */
export type EventStatus = 'UPCOMING' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELED';

export interface SiteEvent {
  id: string;
  program_id: string;
  site_id: string;
  status: EventStatus;
  starts_at: string;
  ends_at: string;
  duration_s: number;
  is_participating: boolean;
  device_settings: { device_id: string; backup_reserve_percentage: number | null; effective_backup_reserve_percentage: number | null }[];
  schedule: { device_ids: string[]; starts_at: string; ends_at: string; duration_s: number; mode: string }[];
  created_at: string;
  updated_at: string;
}

export interface SiteEventPatch {
  is_participating?: boolean;
  backup_reserve_percentage?: number | null;
}

/** Participation can change only while the event has not ended (otherwise 409 EVENT_NOT_MODIFIABLE). */
export const isModifiable = (e: Pick<SiteEvent, 'status'>) => e.status === 'UPCOMING' || e.status === 'IN_PROGRESS';

/** Upcoming and running events soonest first; past ones newest first. */
export function splitEvents(events: readonly SiteEvent[]): { upcoming: SiteEvent[]; past: SiteEvent[] } {
  const by = (a: SiteEvent, b: SiteEvent) => Date.parse(a.starts_at) - Date.parse(b.starts_at);
  return {
    upcoming: events.filter(isModifiable).sort(by),
    past: events.filter((e) => !isModifiable(e)).sort((a, b) => by(b, a)),
  };
}

/** The event-specific reserve the site set (the same for its devices when set with the site-wide field). */
export function eventReserve(e: Pick<SiteEvent, 'device_settings'>): number | null {
  const levels = e.device_settings.map((d) => d.backup_reserve_percentage).filter((v): v is number => v !== null);
  return levels.length > 0 ? Math.max(...levels) : null;
}
