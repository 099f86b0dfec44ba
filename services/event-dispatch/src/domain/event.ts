import type { EventStatusType, EventType, SiteEventType, TargetTypeType } from '@efs/api';
import type { DemandResponseEventMessage } from '@efs/contracts';
import { toApiAction, type Action } from './actions.ts';
import type { Command } from './command.ts';
import { statusAt, updatedAtView } from './eventStatus.ts';
import type { ResolvedTarget } from './targets.ts';

/** A demand-response event as the service keeps it. */
export interface DrEvent {
  id: string;
  utility_id: string;
  program_id: string;
  target_type: TargetTypeType;
  target_ids: string[];
  resolved_targets: ResolvedTarget[] | null;
  actions: Action[];
  minimum_reserve_percentage: number;
  starts_at: Date;
  ends_at: Date;
  /** The last status announced (the scheduler moves it; reads compute the status from the clock). */
  status: EventStatusType;
  next_transition_at: Date | null;
  canceled_at: Date | null;
  /** When its commands were created, then announced (command.created); null until then. */
  commands_created_at: Date | null;
  commands_announced_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A site an event reaches, with its participation. */
export interface EventSiteRow {
  event_id: string;
  integrator_id: string;
  site_id: string;
  is_participating: boolean;
  created_at: Date;
  updated_at: Date;
}

const durationOf = (e: Pick<DrEvent, 'starts_at' | 'ends_at'>) => Math.round((e.ends_at.getTime() - e.starts_at.getTime()) / 1000);

/** The event as the utility API shows it at `now`. */
export function toApiEvent(e: DrEvent, now: Date): EventType {
  return {
    id: e.id,
    program_id: e.program_id,
    target_type: e.target_type,
    target_ids: [...e.target_ids],
    actions: e.actions.map((a) => toApiAction(a, e.minimum_reserve_percentage)),
    status: statusAt(e, now),
    starts_at: e.starts_at.toISOString(),
    ends_at: e.ends_at.toISOString(),
    duration_s: durationOf(e),
    created_at: e.created_at.toISOString(),
    updated_at: updatedAtView(e, now).toISOString(),
  };
}

/** The event as announced: its state as of the change (`status`, `updated_at` given by the caller). */
export function toEventMessage(e: DrEvent, change: DemandResponseEventMessage['change'], status: EventStatusType, updatedAt: Date): DemandResponseEventMessage {
  const api = toApiEvent(e, updatedAt);
  return { change, ...api, status, updated_at: updatedAt.toISOString(), utility_id: e.utility_id };
}

/**
 * The event as the end user of one site sees it: the site's participation, each of its devices'
 * event-specific and effective reserve (as its earliest command carries it), and per action the
 * site's devices and times.
 */
export function toSiteEvent(e: DrEvent, site: EventSiteRow, commands: readonly Command[], now: Date): SiteEventType {
  const ordered = [...commands].sort((a, b) => a.starts_at.getTime() - b.starts_at.getTime() || a.action_index - b.action_index || a.device_id.localeCompare(b.device_id));
  const byDevice = new Map<string, Command>();
  for (const c of ordered) if (!byDevice.has(c.device_id)) byDevice.set(c.device_id, c);
  const schedule = e.actions
    .map((a, index) => ({ a, ids: ordered.filter((c) => c.action_index === index).map((c) => c.device_id) }))
    .filter((s) => s.ids.length > 0)
    .map(({ a, ids }) => ({ device_ids: [...new Set(ids)].sort(), starts_at: a.starts_at.toISOString(), ends_at: a.ends_at.toISOString(), duration_s: a.duration_s, mode: a.mode }));
  const updated = Math.max(updatedAtView(e, now).getTime(), site.updated_at.getTime(), ...commands.map((c) => c.updated_at.getTime()));
  return {
    id: e.id,
    program_id: e.program_id,
    site_id: site.site_id,
    status: statusAt(e, now),
    starts_at: e.starts_at.toISOString(),
    ends_at: e.ends_at.toISOString(),
    duration_s: durationOf(e),
    is_participating: site.is_participating,
    device_settings: [...byDevice.values()]
      .sort((a, b) => a.device_id.localeCompare(b.device_id))
      .map((c) => ({ device_id: c.device_id, backup_reserve_percentage: c.user_reserve_percentage, effective_backup_reserve_percentage: c.backup_reserve_percentage })),
    schedule,
    created_at: e.created_at.toISOString(),
    updated_at: new Date(updated).toISOString(),
  };
}
