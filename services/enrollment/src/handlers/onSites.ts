import type { SiteMessage } from '@efs/contracts';
import { newestByKey } from '@efs/db';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import type { InfoProvided } from '../store/enrollmentStore.ts';

/** Per site of a batch, the newest time its information arrived (its latest state that is not a removal). */
function infoProvided(sites: readonly SiteMessage[]): InfoProvided[] {
  const updates = sites.filter((s) => !s.deleted);
  return newestByKey(updates, (s) => `${s.integrator_id}\u0000${s.id}`, (s) => Date.parse(s.updated_at)).map((s) => ({ integratorId: s.integrator_id, siteId: s.id, before: new Date(s.updated_at) }));
}

/**
 * SitesTopic, a batch at a time: keeps the site read model (one upsert for the batch, by
 * updated_at), and moves each site's NEEDS_ACTION enrollments back to PENDING when the site was
 * updated after the utility asked for more (as applying the messages one by one would: the
 * newest update of a site moves every enrollment an earlier one would). A cheap check without a
 * transaction comes first; only a batch with such enrollments locks and moves them in one. Both
 * steps are idempotent (updated_at rule, state check), so a redelivery, or a crash between them,
 * changes nothing more; a batch that fails is retried message by message.
 */
export const onSites = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'store' | 'writer'>) =>
  async (batch: Delivered<SiteMessage>[]): Promise<void> => {
    const sites = batch.map((m) => m.value);
    await ctx.readModels.upsertSites(ctx.knex, sites);
    const updated = infoProvided(sites);
    if (!(await ctx.store.waitingForInfo(ctx.knex, updated))) return;
    await ctx.knex.transaction(async (trx) => {
      const waiting = await ctx.store.lockWaitingForInfo(trx, updated);
      for (const e of waiting) await ctx.writer.apply(trx, e, { type: 'INFO_PROVIDED', what: 'site' }, { kind: 'SYSTEM', id: 'site-updated' });
    });
  };
