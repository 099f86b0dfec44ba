import { avroRecord, recordType } from './fields.ts';
import { DeviceMessageFields } from './entities/device.ts';
import { SiteMessageFields } from './entities/site.ts';
import { SupplementFields } from './entities/supplement.ts';
import { compositeKey, defineTopic } from './topic.ts';

/**
 * The latest state of a site, keyed `<integrator_id>/<site_id>` on a compacted topic; other
 * services keep read models of it instead of calling commissioning. `deleted` marks a removal.
 */
export const SiteSchema = avroRecord(recordType('Site', 'efs.commissioning', SiteMessageFields));

/** The latest state of a device, keyed `<integrator_id>/<site_id>/<device_id>`. */
export const DeviceSchema = avroRecord(recordType('Device', 'efs.commissioning', DeviceMessageFields));

/** Information added after commissioning (POST /v1/supplements), keyed by `<integrator_id>/<site_id>`. */
export const SupplementSchema = avroRecord(recordType('Supplement', 'efs.commissioning', SupplementFields));

export const SitesTopic = defineTopic({ name: 'efs.commissioning.sites', kind: 'state', partitions: 6, compacted: true, schema: SiteSchema, fields: SiteMessageFields });
export const DevicesTopic = defineTopic({ name: 'efs.commissioning.devices', kind: 'state', partitions: 6, compacted: true, schema: DeviceSchema, fields: DeviceMessageFields });
export const SupplementsTopic = defineTopic({ name: 'efs.commissioning.supplements', kind: 'event', partitions: 6, schema: SupplementSchema, fields: SupplementFields });

export const siteKey = (integratorId: string, siteId: string) => compositeKey(integratorId, siteId);
export const deviceKey = (integratorId: string, siteId: string, deviceId: string) => compositeKey(integratorId, siteId, deviceId);
