import { CommissioningOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { integratorOf } from '@efs/access';
import type { CommissioningContext } from '../context.ts';
import { toSiteRecord } from '../domain/site.ts';

/** `GET /v1/sites` (client token): the integrator's sites, oldest first. */
export const listSites = ({ store }: Pick<CommissioningContext, 'store'>) =>
  implement(CommissioningOperations.listSites, async ({ query, principal }) => {
    const sites = await store.listSites(integratorOf(principal), query);
    return sites.map(toSiteRecord);
  });
