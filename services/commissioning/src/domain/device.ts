import type { DeviceMessage } from '@efs/contracts';
import type { DeviceCreateInType, DeviceCreateType, DeviceRecordType, DeviceTypeType, DeviceUpdateType } from '@efs/api';

/**
 * `configuration.reserve_percentage` of a device whose reserve was never set. The deprecated
 * `configuration` input is ignored, so a new device always starts here.
 */
export const DEFAULT_RESERVE_PERCENTAGE = 0;

/** A device as commissioning keeps it; attributes are integers by name (validated per type at the edge). */
export interface Device {
  integrator_id: string;
  id: string;
  site_id: string;
  manufacturer_name: string | null;
  product_name: string | null;
  serial_number: string | null;
  type: DeviceTypeType;
  attributes: Record<string, number>;
  reserve_percentage: number | null;
  install_date: Date;
  created_at: Date;
  updated_at: Date;
}

/** A new device from commissioning or create-device input; `configuration` is deliberately not read. */
export function newDevice(integratorId: string, id: string, input: DeviceCreateInType | DeviceCreateType, now: Date): Device {
  return {
    integrator_id: integratorId,
    id,
    site_id: input.site_id,
    manufacturer_name: input.manufacturer_name ?? null,
    product_name: input.product_name ?? null,
    serial_number: input.serial_number ?? null,
    type: input.type,
    attributes: { ...input.attributes },
    reserve_percentage: null,
    install_date: new Date(input.install_date),
    created_at: now,
    updated_at: now,
  };
}

/** Applies a partial update of the descriptive fields; `configuration` is ignored like at creation. */
export function applyDeviceUpdate(d: Device, patch: DeviceUpdateType, now: Date): { device: Device; changed: boolean } {
  const next: Device = { ...d };
  let changed = false;
  for (const f of ['manufacturer_name', 'product_name', 'serial_number'] as const) {
    if (patch[f] === undefined) continue;
    const v = patch[f] ?? null;
    if (v !== d[f]) {
      next[f] = v;
      changed = true;
    }
  }
  if (patch.install_date !== undefined) {
    const at = new Date(patch.install_date);
    if (at.getTime() !== d.install_date.getTime()) {
      next.install_date = at;
      changed = true;
    }
  }
  if (changed) next.updated_at = now;
  return { device: next, changed };
}

export function toDeviceRecord(d: Device): DeviceRecordType {
  return {
    id: d.id,
    site_id: d.site_id,
    manufacturer_name: d.manufacturer_name,
    product_name: d.product_name,
    serial_number: d.serial_number,
    type: d.type,
    attributes: { ...d.attributes },
    configuration: { reserve_percentage: d.reserve_percentage ?? DEFAULT_RESERVE_PERCENTAGE },
    install_date: d.install_date.toISOString(),
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  } as DeviceRecordType;
}

/** The device as announced on DevicesTopic; `deleted` marks a removal. */
export function toDeviceMessage(d: Device, deleted = false): DeviceMessage {
  return {
    integrator_id: d.integrator_id,
    site_id: d.site_id,
    id: d.id,
    manufacturer_name: d.manufacturer_name,
    product_name: d.product_name,
    serial_number: d.serial_number,
    type: d.type,
    attributes: { ...d.attributes },
    reserve_percentage: d.reserve_percentage,
    install_date: d.install_date.toISOString(),
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
    deleted,
  };
}
