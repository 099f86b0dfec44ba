import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { SiteDirectory } from '../store/siteDirectory.ts';

/** DevicesTopic: keeps the catalog's device read model (an upsert by updated_at, so a redelivery changes nothing). */
export const onDevice = (sites: SiteDirectory) =>
  async ({ value }: Delivered<DeviceMessage>): Promise<void> => {
    await sites.applyDevice(value);
  };
