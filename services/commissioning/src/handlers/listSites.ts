import { SiteListQuery } from '@efs/api';
import { operation } from '@efs/messaging';
import { integratorOf } from '../domain/access.ts';
import { toSiteRecord } from '../domain/site.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** `GET /v1/sites` (client token): the integrator's sites, oldest first. */
export const listSites = (store: CommissioningStore) =>
  operation({
    query: SiteListQuery,
    async handle({ query, principal }) {
      const sites = await store.listSites(integratorOf(principal), query);
      return { body: sites.map(toSiteRecord) };
    },
  });
