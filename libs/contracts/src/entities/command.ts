import { boolean, enumOf, enumType, int, long, record, recordType, text, timestamp } from '../fields.ts';
import { EventModes, MAX_ACTION_DURATION_S, PowerModes, RESERVE_BOUNDS, SETPOINT_MAX_W } from './event.ts';

const ns = 'efs.dispatch';

export const CommandStatuses = enumType('CommandStatus', ns, ['OK', 'CANCELED', 'OPT_OUT']);
export const CommandDeviceStatuses = enumType('CommandDeviceStatus', ns, ['PENDING', 'OK', 'FAILED_OFFLINE', 'FAILED_FAULT']);

/** What the device does: its share of the action. */
export const BatteryCommandsType = recordType('BatteryCommands', ns, {
  mode: enumOf(EventModes),
  power_mode: enumOf(PowerModes, { nullable: true }),
  setpoint_w: long({ min: 0, max: SETPOINT_MAX_W, nullable: true, doc: "this device's share of the action's setpoint, capped by its rated power" }),
  backup_reserve_percentage: int({ ...RESERVE_BOUNDS, doc: "the device's effective reserve; follows the end user's changes" }),
  enable_grid_import: boolean(),
});

/** A command: what one device does for one action of an event, with its tenancy (never shown). */
export const CommandFields = {
  id: text({ format: 'uuid' }),
  event_id: text({ format: 'uuid' }),
  integrator_id: text({ hidden: true }),
  utility_id: text({ hidden: true }),
  program_id: text({ hidden: true }),
  device_id: text(),
  site_id: text(),
  starts_at: timestamp(),
  ends_at: timestamp(),
  duration_s: long({ min: 1, max: MAX_ACTION_DURATION_S }),
  battery_commands: record(BatteryCommandsType),
  status: enumOf(CommandStatuses, { doc: 'OK, CANCELED (the event was canceled, the device removed or unenrolled) or OPT_OUT (the site opted out)' }),
  device_status: enumOf(CommandDeviceStatuses, { doc: 'PENDING until the device cloud acknowledges' }),
  device_status_reason: text({ max: 2000, nullable: true }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

export const CommandChanges = enumType('CommandChange', ns, ['CREATED', 'UPDATED', 'CANCELED', 'STARTED', 'ENDED']);

/** A command as announced (keyed by device): what happened to it and the command as of then. */
export const CommandMessageFields = { change: enumOf(CommandChanges, { hidden: true }), ...CommandFields } as const;
