import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { toSiteRecord } from '../domain/site.ts';

/** `PATCH /v1/site/{siteId}` (alias `PATCH /v1/sites/{siteId}`): the end user supplies missing site information. */
export const updateSite = ({ knex, store, writer, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'writer' | 'clock'>) =>
  implement(CommissioningOperations.updateSite, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const site = await knex.transaction(async (trx) => {
      const current = await store.getSite(integratorId, params.siteId, trx);
      if (!current) throw Errors.NOT_FOUND(`Site ${params.siteId} not found`);
      return writer.updateSite(trx, current, body, clock());
    });
    return toSiteRecord(site);
  });
