import { Errors } from '@efs/errors';

/** Where a command's effective reserve comes from; a change at that source moves it. */
export type ReserveSource = 'EVENT' | 'PROGRAM' | 'DEVICE';

export interface ReserveLevels {
  /** The end user's level for this event only (PATCH of the site's event), or null. */
  eventLevel: number | null;
  /** The utility's level for this action, or null when the action gave none. */
  actionLevel: number | null;
  /** The program's `minimum_reserve_percentage` when the event was created. */
  programMinimum: number;
  /** The level the user set for the device (`configuration.reserve_percentage`), or null. */
  deviceLevel: number | null;
}

/**
 * The specification's rule: the event-specific level if set; otherwise the program's level;
 * otherwise the one the user set for the device. The program's level for an action is the one
 * its utility gave the action, else the program's minimum; a minimum of 0 sets no floor, so it
 * leaves the device's own level in force. A device with no level of its own keeps 0.
 */
export function effectiveReserve(l: ReserveLevels): { percentage: number; source: ReserveSource } {
  if (l.eventLevel !== null) return { percentage: l.eventLevel, source: 'EVENT' };
  const programLevel = l.actionLevel ?? (l.programMinimum > 0 ? l.programMinimum : null);
  if (programLevel !== null) return { percentage: programLevel, source: 'PROGRAM' };
  return { percentage: l.deviceLevel ?? 0, source: 'DEVICE' };
}

/**
 * An event-specific level the end user asks for must not go below the program's minimum (400,
 * naming each offending field).
 */
export function assertAboveMinimum(levels: readonly { path: (string | number)[]; level: number | null }[], minimum: number): void {
  const low = levels.filter((l) => l.level !== null && l.level < minimum);
  if (low.length === 0) return;
  const msg = (l: { level: number | null }) => `${l.level} is below the program's minimum reserve of ${minimum}%`;
  throw Errors.VALIDATION_ERROR(`Invalid body: ${low[0]!.path.join('.')}: ${msg(low[0]!)}`, {
    detail: low.map((l) => ({ loc: ['body', ...l.path.map(String)], msg: msg(l), type: 'too_small' })),
    errors: low.map((l) => ({ message: msg(l), path: l.path.join('/') })),
  });
}
