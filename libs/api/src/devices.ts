import { z } from 'zod';
import { DateTime, Pagination } from './common.ts';
import { ExternalId } from './sites.ts';

const quantity = (unit: string) => z.number().int().min(0).describe(unit);

/** Attributes of a BATTERY: all integers, all required. */
export const BatteryAttributes = z
  .object({
    battery_capacity_wh: quantity('watt-hours'),
    battery_power_input_w: quantity('watts'),
    battery_power_output_w: quantity('watts'),
  })
  .meta({ id: 'BatteryAttributes' });

/**
 * Attributes of an EV_CHARGER. The specification does not show them: any integer attributes by
 * name are kept (as a battery's are); `max_charge_power_w`, when given, is the charging power a
 * program's yearly earnings are estimated from (without it the charger earns only per-device rates).
 */
export const EvChargerAttributes = z
  .object({ max_charge_power_w: quantity('watts').optional() })
  .catchall(z.number().int())
  .meta({ id: 'EvChargerAttributes' });

/** Deprecated input: accepted in any shape and ignored. */
const DeprecatedConfiguration = z.unknown().optional().meta({ deprecated: true, description: 'Deprecated. Values are accepted and ignored.' });

export const DeviceConfiguration = z.object({ reserve_percentage: z.number().int() }).meta({ id: 'DeviceConfiguration' });

const InstallDate = DateTime.describe('Date installed at the site, or the date the utility gave permission to operate if different.');

/** A device type with its attributes; the other fields come from `base`. */
function byType<S extends z.ZodRawShape>(base: S) {
  return z.discriminatedUnion('type', [
    z.object({ ...base, type: z.literal('BATTERY'), attributes: BatteryAttributes }),
    z.object({ ...base, type: z.literal('EV_CHARGER'), attributes: EvChargerAttributes }),
  ]);
}

/** A device at commissioning (DeviceCreateIn): nine fields, all but `configuration` required. */
export const DeviceCreateIn = byType({
  id: ExternalId.describe("Device identifier in the caller's system."),
  site_id: ExternalId,
  manufacturer_name: z.string().max(255),
  product_name: z.string().max(255),
  serial_number: z.string().max(255),
  configuration: DeprecatedConfiguration,
  install_date: InstallDate,
}).meta({ id: 'DeviceCreateIn' });
export type DeviceCreateInType = z.infer<typeof DeviceCreateIn>;

/** `POST /v1/site/{siteId}/devices`: only site_id, type, attributes and install_date required; an id is generated when absent. */
export const DeviceCreate = byType({
  id: ExternalId.optional(),
  site_id: ExternalId,
  manufacturer_name: z.string().max(255).nullable().optional(),
  product_name: z.string().max(255).nullable().optional(),
  serial_number: z.string().max(255).nullable().optional(),
  configuration: DeprecatedConfiguration,
  install_date: InstallDate,
}).meta({ id: 'DeviceCreate' });
export type DeviceCreateType = z.infer<typeof DeviceCreate>;

/** A device as every endpoint answers it: the input fields, `configuration` always present, timestamps. */
export const Device = byType({
  id: z.string(),
  site_id: z.string(),
  manufacturer_name: z.string().nullable(),
  product_name: z.string().nullable(),
  serial_number: z.string().nullable(),
  configuration: DeviceConfiguration,
  install_date: DateTime,
  created_at: DateTime,
  updated_at: DateTime,
}).meta({ id: 'Device' });
export type DeviceRecordType = z.infer<typeof Device>;

/** `PATCH /v1/site/{siteId}/device/{deviceId}`: descriptive fields only; type and attributes are set at installation. */
export const DeviceUpdate = z
  .strictObject({
    manufacturer_name: z.string().max(255).nullable().optional(),
    product_name: z.string().max(255).nullable().optional(),
    serial_number: z.string().max(255).nullable().optional(),
    install_date: InstallDate.optional(),
    configuration: DeprecatedConfiguration,
  })
  .meta({ id: 'DeviceUpdate' });
export type DeviceUpdateType = z.infer<typeof DeviceUpdate>;

export const DeviceParams = z.object({ siteId: ExternalId, deviceId: ExternalId });
export type DeviceParamsType = z.infer<typeof DeviceParams>;

export const DeviceListQuery = Pagination;
