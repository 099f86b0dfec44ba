import type { SiteMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { SiteDirectory } from '../store/siteDirectory.ts';

/** SitesTopic: keeps the catalog's site read model (an upsert by updated_at, so a redelivery changes nothing). */
export const onSite = (sites: SiteDirectory) =>
  async ({ value }: Delivered<SiteMessage>): Promise<void> => {
    await sites.applySite(value);
  };
