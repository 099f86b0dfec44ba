import type { SiteMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../service.ts';

/**
 * SitesTopic, a batch at a time in one transaction: keeps the site read model, and moves each
 * site's NEEDS_ACTION enrollments back to PENDING when the site was updated after the utility
 * asked for more. Both steps are idempotent (updated_at rule, state check), so a redelivery
 * changes nothing; a batch that fails is retried message by message.
 */
export const onSites = (ctx: EnrollmentContext) =>
  async (batch: Delivered<SiteMessage>[]): Promise<void> => {
    await ctx.knex.transaction(async (trx) => {
      for (const { value } of batch) {
        await ctx.readModels.upsertSite(trx, value);
        if (value.deleted) continue;
        const waiting = await ctx.store.lockWaitingForInfo(trx, value.integrator_id, value.id, new Date(value.updated_at));
        for (const e of waiting) await ctx.writer.apply(trx, e, { type: 'INFO_PROVIDED', what: 'site' }, { kind: 'SYSTEM', id: 'site-updated' });
      }
    });
  };
