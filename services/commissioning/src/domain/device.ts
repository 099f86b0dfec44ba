import { DeviceFields, applyPatch, createKeys, fromInput, pick, toWire, updateKeys, visibleFields, type DeviceMessage, type DomainOf } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { DeviceCreateInType, DeviceCreateType, DeviceRecordType, DeviceUpdateType } from '@efs/api';

/**
 * `configuration.reserve_percentage` of a device whose reserve was never set. The deprecated
 * `configuration` input is ignored, so a new device always starts here.
 */
export const DEFAULT_RESERVE_PERCENTAGE = 0;

/** A device as commissioning keeps it; attributes are integers by name (validated per type at the edge). */
export type Device = DomainOf<typeof DeviceFields>;

/** What commissioning takes of a new device (not `configuration`), and what may change later. */
const DeviceInput = pick(DeviceFields, createKeys(DeviceFields));
const DeviceChanges = pick(DeviceFields, updateKeys(DeviceFields));

/** A new device from commissioning or create-device input; `configuration` is deliberately not read. */
export function newDevice(integratorId: string, id: string, input: DeviceCreateInType | DeviceCreateType, now: Date): Device {
  return { ...fromInput(DeviceInput, input), integrator_id: integratorId, id, reserve_percentage: null, created_at: now, updated_at: now };
}

/** Applies a partial update of the descriptive fields; `configuration` is ignored like at creation. */
export function applyDeviceUpdate(d: Device, patch: DeviceUpdateType, now: Date): { device: Device; changed: boolean } {
  const { next, changed } = applyPatch(DeviceChanges, d, patch);
  return { device: changed ? { ...next, updated_at: now } : next, changed };
}

/** The device with the reserve level its cloud applied (a settings request), or unchanged when it has it already. */
export function applyReserve(d: Device, level: number, now: Date): { device: Device; changed: boolean } {
  if (d.reserve_percentage === level) return { device: d, changed: false };
  return { device: { ...d, reserve_percentage: level, updated_at: new Date(Math.max(now.getTime(), d.updated_at.getTime() + 1)) }, changed: true };
}

export function toDeviceRecord(d: Device): DeviceRecordType {
  // The union of the API ties attributes to the type; a kept device was checked against it at the edge.
  return { ...toWire(visibleFields(DeviceFields), d), configuration: { reserve_percentage: d.reserve_percentage ?? DEFAULT_RESERVE_PERCENTAGE } } as DeviceRecordType;
}

/** The device as announced on DevicesTopic; `deleted` marks a removal. */
export function toDeviceMessage(d: Device, deleted = false): DeviceMessage {
  return { ...toWire(DeviceFields, d), deleted };
}

/** The device of a `/v1/site/{siteId}/device/{deviceId}` path: 404 unless it exists at that site. */
export function deviceAtSite(device: Device | undefined, siteId: string, deviceId: string): Device {
  if (!device || device.site_id !== siteId) throw Errors.NOT_FOUND(`Device ${deviceId} not found at site ${siteId}`);
  return device;
}
