import type { SiteMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../service.ts';

/**
 * SitesTopic: keeps the site read model, and moves the site's NEEDS_ACTION enrollments back to
 * PENDING when the site was updated after the utility asked for more. Both steps are
 * idempotent (updated_at rule, state check), so a redelivery changes nothing.
 */
export const onSite = (ctx: EnrollmentContext) =>
  async ({ value }: Delivered<SiteMessage>): Promise<void> => {
    await ctx.knex.transaction(async (trx) => {
      await ctx.readModels.upsertSite(trx, value);
      if (value.deleted) return;
      const waiting = await ctx.store.lockWaitingForInfo(trx, value.integrator_id, value.id, new Date(value.updated_at));
      for (const e of waiting) await ctx.writer.apply(trx, e, { type: 'INFO_PROVIDED', what: 'site' }, { kind: 'SYSTEM', id: 'site-updated' });
    });
  };
