import { DevicesTopic, SitesTopic, deviceKey, siteKey } from '@efs/contracts';
import { OutboxWriter, type Knex } from '@efs/db';
import { toDeviceMessage } from './domain/device.ts';
import { toSiteMessage } from './domain/site.ts';
import { COMMISSIONING_SCHEMA } from './context.ts';
import { KnexCommissioningStore } from './store/commissioningStore.ts';

/**
 * Re-announces every site, then every device, as they are now (read-model repair). A device
 * deleted earlier is gone from the tables, so a read model that missed its removal keeps it.
 */
export async function announceCommissioningState(trx: Knex.Transaction): Promise<number> {
  const store = new KnexCommissioningStore(trx, COMMISSIONING_SCHEMA);
  const outbox = new OutboxWriter({ schema: COMMISSIONING_SCHEMA, topics: [SitesTopic, DevicesTopic] });
  const sites = await store.allSites();
  await outbox.enqueueMany(trx, SitesTopic, sites.map((s) => ({ key: siteKey(s.integrator_id, s.id), value: toSiteMessage(s) })));
  const devices = await store.allDevices();
  await outbox.enqueueMany(trx, DevicesTopic, devices.map((d) => ({ key: deviceKey(d.integrator_id, d.site_id, d.id), value: toDeviceMessage(d) })));
  return sites.length + devices.length;
}
