import { deletedFlag, enumOf, enumType, int, long, map, text, timestamp } from '../fields.ts';
import { externalId } from './site.ts';

export const DeviceTypes = enumType('DeviceType', 'efs.common', ['BATTERY', 'EV_CHARGER']);

/**
 * Largest quantity (Wh, W) a device attribute takes: 1 GWh or 1 GW, far above any home device,
 * and small enough that earnings estimated from it stay exact (see the program's rates).
 */
export const DEVICE_QUANTITY_MAX = 1_000_000_000;

const quantity = <const D extends string>(doc: D) => long({ min: 0, max: DEVICE_QUANTITY_MAX, doc, create: 'required' });

/** Attributes of a BATTERY: all integers, all required. */
export const BatteryAttributeFields = {
  battery_capacity_wh: quantity('watt-hours'),
  battery_power_input_w: quantity('watts'),
  battery_power_output_w: quantity('watts'),
} as const;

/**
 * Attributes of an EV_CHARGER. The specification does not show them: any integer attributes by
 * name are kept (`deviceAttribute`); `max_charge_power_w`, when given, is the charging power a
 * program's yearly earnings are estimated from.
 */
export const EvChargerAttributeFields = {
  max_charge_power_w: { ...quantity('watts'), create: 'optional' },
} as const;

/** Any integer attribute by name: the bounds of every device type's attributes together. */
export const deviceAttribute = long({ min: -DEVICE_QUANTITY_MAX, max: DEVICE_QUANTITY_MAX });

/** A descriptive field: optional when a device is added, changeable, null when unknown. */
const descriptive = { max: 255, nullable: true, create: 'optional', update: true } as const;

/**
 * A Device: the specification's fields (its `configuration` is answered from
 * `reserve_percentage`, which the device's settings set), timestamps, and its integrator.
 */
export const DeviceFields = {
  integrator_id: text({ hidden: true }),
  site_id: { ...externalId, create: 'required' },
  id: { ...externalId, create: 'optional', doc: "Device identifier in the caller's system." },
  manufacturer_name: text(descriptive),
  product_name: text(descriptive),
  serial_number: text(descriptive),
  type: enumOf(DeviceTypes, { create: 'required' }),
  attributes: map(deviceAttribute, { create: 'required', doc: 'integer attributes by name (battery_capacity_wh, ...)' }),
  reserve_percentage: int({ min: 0, max: 100, nullable: true, hidden: true }),
  install_date: timestamp({ create: 'required', update: true, doc: 'Date installed at the site, or the date the utility gave permission to operate if different.' }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

/** The device as announced on its state topic: every field, and `deleted` for a removal. */
export const DeviceMessageFields = { ...DeviceFields, deleted: deletedFlag } as const;
