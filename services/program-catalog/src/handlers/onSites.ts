import type { SiteMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { CatalogContext } from '../context.ts';

/**
 * SitesTopic, a batch at a time: keeps the catalog's site read model (one upsert by updated_at
 * for the batch, so a redelivery changes nothing).
 */
export const onSites = ({ sites }: Pick<CatalogContext, 'sites'>) =>
  async (batch: Delivered<SiteMessage>[]): Promise<void> => {
    await sites.applySites(batch.map((m) => m.value));
  };
