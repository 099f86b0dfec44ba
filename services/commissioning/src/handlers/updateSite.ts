import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import type { Knex } from '@efs/db';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { toSiteRecord } from '../domain/site.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';
import type { SiteWriter } from '../store/siteWriter.ts';

/** `PATCH /v1/site/{siteId}` (alias `PATCH /v1/sites/{siteId}`): the end user supplies missing site information. */
export const updateSite = (knex: Knex, store: CommissioningStore, writer: SiteWriter) =>
  implement(CommissioningOperations.updateSite, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const site = await knex.transaction(async (trx) => {
      const current = await store.getSite(integratorId, params.siteId, trx);
      if (!current) throw Errors.NOT_FOUND(`Site ${params.siteId} not found`);
      return writer.updateSite(trx, current, body, new Date());
    });
    return toSiteRecord(site);
  });
