import { enumOf, enumType, int, record, recordType, text, timestamp } from '../fields.ts';
import { RESERVE_BOUNDS } from './event.ts';

const ns = 'efs.dispatch';

export const SettingsStatuses = enumType('SettingsStatus', ns, ['PENDING', 'APPLIED', 'FAILED']);

/** Settings the end user chose for a device outside events. */
export const DeviceSettingsType = recordType('DeviceSettings', ns, {
  backup_reserve_percentage: int({ ...RESERVE_BOUNDS, doc: "the device's own reserve level; not below the minimum of a program it is ACTIVE in" }),
});

/** A settings request: a setting the end user chose for a device, for its cloud to apply. */
export const SettingsRequestFields = {
  id: text({ format: 'uuid' }),
  integrator_id: text({ hidden: true }),
  device_id: text(),
  site_id: text(),
  settings: record(DeviceSettingsType),
  status: enumOf(SettingsStatuses),
  status_reason: text({ max: 2000, nullable: true }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

export const SettingsChanges = enumType('SettingsChange', ns, ['CREATED', 'UPDATED']);

/** A settings request as announced (keyed by device): created (settings.apply) or updated (APPLIED, FAILED). */
export const SettingsRequestMessageFields = { change: enumOf(SettingsChanges, { hidden: true }), ...SettingsRequestFields } as const;
