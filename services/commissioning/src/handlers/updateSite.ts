import { SiteParams, SiteUpdate } from '@efs/api';
import { SitesTopic, siteKey } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { assertSiteAccess } from '../domain/access.ts';
import { applySiteUpdate, toSiteMessage, toSiteRecord } from '../domain/site.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** `PATCH /v1/site/{siteId}` (alias `PATCH /v1/sites/{siteId}`): the end user supplies missing site information. */
export const updateSite = (knex: Knex, store: CommissioningStore, outbox: Outbox) =>
  operation({
    params: SiteParams,
    body: SiteUpdate,
    async handle({ params, body, principal }) {
      const integratorId = assertSiteAccess(principal, params.siteId);
      const site = await knex.transaction(async (trx) => {
        const current = await store.getSite(integratorId, params.siteId, trx);
        if (!current) throw new AppError('NOT_FOUND', `Site ${params.siteId} not found`);
        const { site: next, changed } = applySiteUpdate(current, body, new Date());
        if (changed) {
          await store.updateSite(trx, next);
          await outbox.enqueue(trx, SitesTopic, siteKey(integratorId, next.id), toSiteMessage(next));
        }
        return next;
      });
      return { body: toSiteRecord(site) };
    },
  });
