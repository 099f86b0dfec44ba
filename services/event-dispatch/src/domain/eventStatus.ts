import type { EventStatusType } from '@efs/api';

/**
 * How an event's status moves (decisions.md, Demand-response events): UPCOMING until its first
 * action starts, IN_PROGRESS until its last one ends, then COMPLETED; CANCELED by the utility at
 * any point before it completes. Time alone moves it, so it is a function of the clock.
 */

export interface EventTimes {
  starts_at: Date;
  ends_at: Date;
  canceled_at: Date | null;
}

/** The statuses in which the end user may still change participation (and the utility cancel). */
export const MODIFIABLE_STATUSES: readonly EventStatusType[] = ['UPCOMING', 'IN_PROGRESS'];
export const isModifiable = (s: EventStatusType): boolean => MODIFIABLE_STATUSES.includes(s);

/** The status an event has at `now`. */
export function statusAt(e: EventTimes, now: Date): EventStatusType {
  if (e.canceled_at !== null) return 'CANCELED';
  if (now.getTime() < e.starts_at.getTime()) return 'UPCOMING';
  if (now.getTime() < e.ends_at.getTime()) return 'IN_PROGRESS';
  return 'COMPLETED';
}

/** When an event in `status` next moves by time, or null when it never will again. */
export function nextTransitionAt(status: EventStatusType, e: Pick<EventTimes, 'starts_at' | 'ends_at'>): Date | null {
  if (status === 'UPCOMING') return e.starts_at;
  if (status === 'IN_PROGRESS') return e.ends_at;
  return null;
}

/**
 * The transitions due between the last announced status and `now`, in order, each with the
 * moment it happened: an event found UPCOMING after its end (the service was down) goes through
 * IN_PROGRESS to COMPLETED, so that every status it had is announced once.
 */
export function dueTransitions(announced: EventStatusType, e: EventTimes, now: Date): { status: EventStatusType; at: Date }[] {
  if (e.canceled_at !== null) return [];
  const steps: { status: EventStatusType; at: Date }[] = [];
  let status = announced;
  for (;;) {
    const at = nextTransitionAt(status, e);
    if (at === null || at.getTime() > now.getTime()) return steps;
    status = status === 'UPCOMING' ? 'IN_PROGRESS' : 'COMPLETED';
    steps.push({ status, at });
  }
}

/**
 * The `updated_at` an event shows at `now`: a status reached by time is a change at the moment it
 * happened, whether or not the scheduler has recorded it yet.
 */
export function updatedAtView(e: EventTimes & { updated_at: Date }, now: Date): Date {
  let t = e.updated_at.getTime();
  if (e.canceled_at === null) {
    for (const at of [e.starts_at, e.ends_at]) if (at.getTime() <= now.getTime()) t = Math.max(t, at.getTime());
  }
  return new Date(t);
}

/**
 * A status filter as conditions on the clock: which events are in one of `statuses` at `now`.
 * Returned as data so that a store can turn it into SQL without deciding the rule itself.
 */
export type StatusCondition =
  | { status: 'CANCELED' }
  | { status: 'UPCOMING'; startsAfter: Date }
  | { status: 'IN_PROGRESS'; startedBy: Date; endsAfter: Date }
  | { status: 'COMPLETED'; endedBy: Date };

export function statusConditions(statuses: readonly EventStatusType[], now: Date): StatusCondition[] {
  return [...new Set(statuses)].map((s): StatusCondition => {
    switch (s) {
      case 'CANCELED':
        return { status: 'CANCELED' };
      case 'UPCOMING':
        return { status: 'UPCOMING', startsAfter: now };
      case 'IN_PROGRESS':
        return { status: 'IN_PROGRESS', startedBy: now, endsAfter: now };
      case 'COMPLETED':
        return { status: 'COMPLETED', endedBy: now };
    }
  });
}
