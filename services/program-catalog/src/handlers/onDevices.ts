import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { SiteDirectory } from '../store/siteDirectory.ts';

/**
 * DevicesTopic, a batch at a time: keeps the catalog's device read model (one upsert by
 * updated_at for the batch, so a redelivery changes nothing).
 */
export const onDevices = (sites: SiteDirectory) =>
  async (batch: Delivered<DeviceMessage>[]): Promise<void> => {
    await sites.applyDevices(batch.map((m) => m.value));
  };
