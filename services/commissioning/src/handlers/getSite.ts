import { SiteParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { assertSiteAccess } from '../domain/access.ts';
import { toSiteRecord } from '../domain/site.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** `GET /v1/site/{siteId}` (site token), also op `sites.get` for the gateway's auth and the catalog. */
export const getSite = (store: CommissioningStore) =>
  operation({
    params: SiteParams,
    async handle({ params, principal }) {
      const integratorId = assertSiteAccess(principal, params.siteId);
      const site = await store.getSite(integratorId, params.siteId);
      if (!site) throw new AppError('NOT_FOUND', `Site ${params.siteId} not found`);
      return { body: toSiteRecord(site) };
    },
  });
