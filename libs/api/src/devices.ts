import { z } from 'zod';
import { BatteryAttributeFields, DeviceFields, DeviceSettingsType as DeviceSettingsRecord, EvChargerAttributeFields, deviceAttribute, omit } from '@efs/contracts';
import { Pagination } from './common.ts';
import { createShape, namedRecord, nonNull, recordShape, updateShape, zodOf } from './fields.ts';
import { ExternalId } from './sites.ts';

/** Attributes of a BATTERY: all integers, all required. */
export const BatteryAttributes = z.object(createShape(BatteryAttributeFields)).meta({ id: 'BatteryAttributes' });

/** Most attributes an EV_CHARGER may carry (any integer attributes by name are kept). */
export const MAX_EV_CHARGER_ATTRIBUTES = 50;

/**
 * Attributes of an EV_CHARGER. The specification does not show them: any integer attributes by
 * name are kept (as a battery's are); `max_charge_power_w`, when given, is the charging power a
 * program's yearly earnings are estimated from (without it the charger earns only per-device rates).
 */
export const EvChargerAttributes = z
  .object(createShape(EvChargerAttributeFields))
  .catchall(zodOf(deviceAttribute))
  .refine((a) => Object.keys(a).length <= MAX_EV_CHARGER_ATTRIBUTES, `at most ${MAX_EV_CHARGER_ATTRIBUTES} attributes`)
  .refine((a) => Object.keys(a).every((k) => k.length <= 100), 'attribute names of at most 100 characters')
  .meta({ id: 'EvChargerAttributes' });

/** Deprecated input: accepted in any shape and ignored. */
const DeprecatedConfiguration = z.unknown().optional().meta({ deprecated: true, description: 'Deprecated. Values are accepted and ignored.' });

export const DeviceConfiguration = z.object({ reserve_percentage: z.number().int() }).meta({ id: 'DeviceConfiguration' });

/** The fields besides `type` and `attributes`, which `byType` adds. */
const Described = omit(DeviceFields, ['type', 'attributes']);

/** A device type with its attributes; the other fields come from `base`. */
function byType<S extends z.ZodRawShape>(base: S) {
  return z.discriminatedUnion('type', [
    z.object({ ...base, type: z.literal('BATTERY'), attributes: BatteryAttributes }),
    z.object({ ...base, type: z.literal('EV_CHARGER'), attributes: EvChargerAttributes }),
  ]);
}

/** `POST /v1/site/{siteId}/devices`: only site_id, type, attributes and install_date required; an id is generated when absent. */
export const DeviceCreate = byType({ ...createShape(Described), configuration: DeprecatedConfiguration }).meta({ id: 'DeviceCreate' });
export type DeviceCreateType = z.infer<typeof DeviceCreate>;

/** A device at commissioning (DeviceCreateIn): nine fields, all but `configuration` required. */
export const DeviceCreateIn = byType({
  ...createShape(Described),
  id: zodOf(DeviceFields.id),
  manufacturer_name: nonNull(DeviceFields.manufacturer_name),
  product_name: nonNull(DeviceFields.product_name),
  serial_number: nonNull(DeviceFields.serial_number),
  configuration: DeprecatedConfiguration,
}).meta({ id: 'DeviceCreateIn' });
export type DeviceCreateInType = z.infer<typeof DeviceCreateIn>;

/** A device as every endpoint answers it: the input fields, `configuration` always present, timestamps. */
export const Device = byType({ ...recordShape(Described), configuration: DeviceConfiguration }).meta({ id: 'Device' });
export type DeviceRecordType = z.infer<typeof Device>;

/** Settings the end user chose for a device outside events; the device cloud applies them (a settings request). */
export const DeviceSettings = namedRecord(DeviceSettingsRecord);
export type DeviceSettingsType = z.infer<typeof DeviceSettings>;

/**
 * `PATCH /v1/site/{siteId}/device/{deviceId}`: descriptive fields (type and attributes are set at
 * installation), and `settings`, which creates a settings request for the device cloud.
 */
export const DeviceUpdate = z
  .strictObject({
    ...updateShape(DeviceFields),
    configuration: DeprecatedConfiguration,
    settings: DeviceSettings.optional().describe('Creates a settings request; configuration.reserve_percentage shows the level once the device cloud applied it.'),
  })
  .meta({ id: 'DeviceUpdate' });
export type DeviceUpdateType = z.infer<typeof DeviceUpdate>;

export const DeviceParams = z.object({ siteId: ExternalId, deviceId: ExternalId });
export type DeviceParamsType = z.infer<typeof DeviceParams>;

export const DeviceListQuery = Pagination;
