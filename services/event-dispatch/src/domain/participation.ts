import type { SiteEventPatchType } from '@efs/api';
import { Errors } from '@efs/errors';
import { commandStatus, hasEnded, phaseDueAt, type Command } from './command.ts';
import { assertAboveMinimum, effectiveReserve } from './reserve.ts';

/**
 * The event-specific levels a PATCH of the site's event asks for, per device: the top-level
 * `backup_reserve_percentage` for every device of the site in the event, then `device_settings`
 * per device (null clears). A device the event does not reach at this site, or a level below the
 * program's minimum, is 400.
 */
export function requestedLevels(patch: SiteEventPatchType, siteDeviceIds: readonly string[], programMinimum: number): Map<string, number | null> {
  const levels = new Map<string, number | null>();
  if (patch.backup_reserve_percentage !== undefined) for (const id of siteDeviceIds) levels.set(id, patch.backup_reserve_percentage);
  const strangers = (patch.device_settings ?? []).map((d, i) => ({ d, i })).filter(({ d }) => !siteDeviceIds.includes(d.device_id));
  if (strangers.length > 0) {
    const msg = (id: string) => `Device ${id} is not a device of this site in the event`;
    throw Errors.VALIDATION_ERROR(`Invalid body: device_settings.${strangers[0]!.i}.device_id: ${msg(strangers[0]!.d.device_id)}`, {
      detail: strangers.map(({ d, i }) => ({ loc: ['body', 'device_settings', String(i), 'device_id'], msg: msg(d.device_id), type: 'not_found' })),
      errors: strangers.map(({ d, i }) => ({ message: msg(d.device_id), path: `device_settings/${i}/device_id` })),
    });
  }
  for (const d of patch.device_settings ?? []) levels.set(d.device_id, d.backup_reserve_percentage);
  assertAboveMinimum(
    [
      ...(patch.backup_reserve_percentage === undefined ? [] : [{ path: ['backup_reserve_percentage'], level: patch.backup_reserve_percentage }]),
      ...(patch.device_settings ?? []).map((d, i) => ({ path: ['device_settings', i, 'backup_reserve_percentage'], level: d.backup_reserve_percentage })),
    ],
    programMinimum,
  );
  return levels;
}

export interface ParticipationChange {
  /** The site's participation in the event after the change. */
  siteParticipating: boolean;
  /** The end user's level for this event per device, for the devices it changes (null clears). */
  levels: ReadonlyMap<string, number | null>;
  programMinimum: number;
  /** The device's own level, per device id (read model). */
  deviceLevels: ReadonlyMap<string, number | null>;
  now: Date;
}

/**
 * Which commands a participation change touches and how: every command of the site in the event
 * that has not ended and is not canceled gets the status of the site's choice and the effective
 * reserve of its device's levels. A command that would come out unchanged is left out.
 */
export function planParticipation(commands: readonly Command[], change: ParticipationChange): Command[] {
  const out: Command[] = [];
  for (const c of commands) {
    if (c.status === 'CANCELED' || hasEnded(c, change.now)) continue;
    const user = change.levels.has(c.device_id) ? change.levels.get(c.device_id)! : c.user_reserve_percentage;
    const reserve = effectiveReserve({
      eventLevel: user,
      actionLevel: c.action_reserve_percentage,
      programMinimum: change.programMinimum,
      deviceLevel: change.deviceLevels.get(c.device_id) ?? null,
    });
    const status = commandStatus(c, change.siteParticipating);
    const next: Command = { ...c, status, user_reserve_percentage: user, backup_reserve_percentage: reserve.percentage, reserve_source: reserve.source };
    next.phase_due_at = phaseDueAt(next);
    if (next.status !== c.status || next.user_reserve_percentage !== c.user_reserve_percentage || next.backup_reserve_percentage !== c.backup_reserve_percentage || next.reserve_source !== c.reserve_source) {
      out.push({ ...next, updated_at: change.now });
    }
  }
  return out;
}

