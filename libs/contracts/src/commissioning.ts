import { defineTopic } from './topic.ts';
import { DeviceTypeSchema } from './catalog.ts';

const nullableString = <const N extends string>(name: N) => ({ name, type: ['null', 'string'], default: null }) as const;

/**
 * The latest state of a site, keyed `<integrator_id>/<site_id>` on a compacted topic; other
 * services keep read models of it instead of calling commissioning. `deleted` marks a removal.
 */
export const SiteSchema = {
  type: 'record',
  name: 'Site',
  namespace: 'efs.commissioning',
  fields: [
    { name: 'integrator_id', type: 'string' },
    { name: 'id', type: 'string' },
    nullableString('first_name'),
    nullableString('last_name'),
    nullableString('company_name'),
    nullableString('email'),
    nullableString('state_code'),
    nullableString('city'),
    nullableString('zip_code'),
    nullableString('street_address'),
    nullableString('street_address2'),
    nullableString('service_account_id'),
    { name: 'created_at', type: 'string' },
    { name: 'updated_at', type: 'string' },
    { name: 'deleted', type: 'boolean', default: false },
  ],
} as const;

/** The latest state of a device, keyed `<integrator_id>/<site_id>/<device_id>`. */
export const DeviceSchema = {
  type: 'record',
  name: 'Device',
  namespace: 'efs.commissioning',
  fields: [
    { name: 'integrator_id', type: 'string' },
    { name: 'site_id', type: 'string' },
    { name: 'id', type: 'string' },
    nullableString('manufacturer_name'),
    nullableString('product_name'),
    nullableString('serial_number'),
    { name: 'type', type: DeviceTypeSchema },
    { name: 'attributes', type: { type: 'map', values: 'long' }, doc: 'integer attributes by name (battery_capacity_wh, ...)' },
    { name: 'reserve_percentage', type: ['null', 'int'], default: null },
    { name: 'install_date', type: 'string' },
    { name: 'created_at', type: 'string' },
    { name: 'updated_at', type: 'string' },
    { name: 'deleted', type: 'boolean', default: false },
  ],
} as const;

/** Information added after commissioning (POST /v1/supplements), keyed by `<integrator_id>/<site_id>`. */
export const SupplementSchema = {
  type: 'record',
  name: 'Supplement',
  namespace: 'efs.commissioning',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'integrator_id', type: 'string' },
    { name: 'site_id', type: 'string' },
    nullableString('device_id'),
    { name: 'data', type: { type: 'map', values: 'string' }, doc: 'values as JSON text' },
    { name: 'created_at', type: 'string' },
  ],
} as const;

export const SitesTopic = defineTopic({ name: 'efs.commissioning.sites', kind: 'state', partitions: 6, compacted: true, schema: SiteSchema });
export const DevicesTopic = defineTopic({ name: 'efs.commissioning.devices', kind: 'state', partitions: 6, compacted: true, schema: DeviceSchema });
export const SupplementsTopic = defineTopic({ name: 'efs.commissioning.supplements', kind: 'event', partitions: 6, schema: SupplementSchema });

export const siteKey = (integratorId: string, siteId: string) => `${integratorId}/${siteId}`;
export const deviceKey = (integratorId: string, siteId: string, deviceId: string) => `${integratorId}/${siteId}/${deviceId}`;
