import { CommissioningOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { siteIntegratorOf } from '@efs/access';
import type { CommissioningContext } from '../context.ts';
import { toSiteRecord } from '../domain/site.ts';

/** `GET /v1/site/{siteId}` (site token), also asked by the gateway (site tokens), the catalog and enrollment. */
export const getSite = ({ store }: Pick<CommissioningContext, 'store'>) =>
  implement(CommissioningOperations.getSite, async ({ params, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const site = await store.getSite(integratorId, params.siteId);
    if (!site) throw Errors.NOT_FOUND(`Site ${params.siteId} not found`);
    return toSiteRecord(site);
  });
