import { processOnce } from '@efs/db';
import type { SupplementMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';

/** SupplementsTopic: a supplement answers the site's NEEDS_ACTION enrollments sent back before it arrived. */
export const onSupplement = (ctx: Pick<EnrollmentContext, 'knex' | 'schema' | 'store' | 'writer'>) =>
  async ({ value, meta }: Delivered<SupplementMessage>): Promise<void> => {
    await processOnce(ctx.knex, ctx.schema, 'efs-enrollment-supplements', meta.id, async (trx) => {
      const waiting = await ctx.store.lockWaitingForInfo(trx, [{ integratorId: value.integrator_id, siteId: value.site_id, before: new Date(value.created_at) }]);
      for (const e of waiting) await ctx.writer.apply(trx, e, { type: 'INFO_PROVIDED', what: 'supplement' }, { kind: 'INTEGRATOR', id: value.integrator_id });
      return waiting.length;
    });
  };
