import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { CatalogContext } from '../context.ts';

/**
 * DevicesTopic, a batch at a time: keeps the catalog's device read model (one upsert by
 * updated_at for the batch, so a redelivery changes nothing).
 */
export const onDevices = ({ sites }: Pick<CatalogContext, 'sites'>) =>
  async (batch: Delivered<DeviceMessage>[]): Promise<void> => {
    await sites.applyDevices(batch.map((m) => m.value));
  };
