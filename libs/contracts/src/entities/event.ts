import { array, boolean, enumOf, enumType, int, long, record, recordType, text, timestamp } from '../fields.ts';

const ns = 'efs.dispatch';

export const EventStatuses = enumType('EventStatus', ns, ['UPCOMING', 'IN_PROGRESS', 'COMPLETED', 'CANCELED']);
export const TargetTypes = enumType('TargetType', ns, ['DEVICE', 'GROUP', 'PROGRAM', 'SITE']);
export const EventModes = enumType('EventMode', ns, ['CHARGE', 'DISCHARGE', 'STANDBY', 'BACKUP', 'SELF_CONSUMPTION', 'SAVINGS']);
export const PowerModes = enumType('PowerMode', ns, ['SETPOINT', 'FOLLOW_LOAD']);
export const SetpointModes = enumType('SetpointMode', ns, ['EVEN']);

/** Longest action: a week. */
export const MAX_ACTION_DURATION_S = 7 * 24 * 3600;
/** Largest setpoint an action takes: 10 GW, far above any fleet, far below what the wire carries. */
export const SETPOINT_MAX_W = 10_000_000_000;
/** Most target ids one event names (a PROGRAM target reaches every ACTIVE device regardless). */
export const MAX_TARGET_IDS = 10_000;
/** Most actions one event has. */
export const MAX_ACTIONS = 100;

/** A reserve level: a percentage of the battery's capacity. */
export const RESERVE_BOUNDS = { min: 0, max: 100 } as const;

/**
 * One action of an event: what the targeted devices do and when. `starts_at`, `duration_s` and
 * `mode` are required at creation; the rest is optional there and, in every answer, present (null
 * where it does not apply to the mode).
 */
export const ActionType = recordType('Action', ns, {
  starts_at: timestamp({ create: 'required' }),
  duration_s: long({ min: 1, max: MAX_ACTION_DURATION_S, create: 'required', doc: 'seconds' }),
  mode: enumOf(EventModes, { create: 'required' }),
  power_mode: enumOf(PowerModes, { nullable: true, create: 'optional', doc: 'only for CHARGE and DISCHARGE; default SETPOINT with a setpoint, else FOLLOW_LOAD' }),
  setpoint_mode: enumOf(SetpointModes, { nullable: true, create: 'optional', doc: 'only with SETPOINT; default EVEN' }),
  setpoint_w: long({ min: 1, max: SETPOINT_MAX_W, nullable: true, create: 'optional', doc: 'watts, the total for the targeted devices; required with SETPOINT' }),
  backup_reserve_percentage: int({ ...RESERVE_BOUNDS, nullable: true, create: 'optional', doc: "default: the program's minimum_reserve_percentage" }),
  enable_grid_import: boolean({ nullable: true, create: 'optional', doc: 'default false' }),
});

/** A demand-response event as its utility sees it, with the utility it belongs to (never shown). */
export const EventFields = {
  id: text({ format: 'uuid' }),
  utility_id: text({ hidden: true }),
  program_id: text({ min: 1, max: 100, create: 'required' }),
  target_type: enumOf(TargetTypes, { create: 'required' }),
  target_ids: array(text({ min: 1, max: 255 }), { max: MAX_TARGET_IDS, create: 'required', doc: 'device ids, site ids, group ids of the program, or the program id' }),
  actions: array(record(ActionType), { min: 1, max: MAX_ACTIONS, create: 'required' }),
  status: enumOf(EventStatuses),
  starts_at: timestamp({ doc: 'start of its first action' }),
  ends_at: timestamp({ doc: 'end of its last action' }),
  duration_s: long({ min: 0, max: MAX_ACTIONS * MAX_ACTION_DURATION_S * 2 }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

export const EventChanges = enumType('EventChange', ns, ['CREATED', 'UPDATED', 'CANCELED']);

/** An event as announced: what happened to it (created, a status reached, canceled) and the event as of then. */
export const EventMessageFields = { change: enumOf(EventChanges, { hidden: true }), ...EventFields } as const;
