import type { EnrollmentMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';

const ENDED = ['UNENROLLED', 'REJECTED'];

/**
 * EnrollmentsTopic: keeps the enrollments (status, devices, groups) that targets resolve from.
 * When an enrollment ends, the commands it gave its devices in the program that have not ended
 * are canceled (commands created after it ended belong to a later enrollment and stay).
 */
export const onEnrollment = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'commands' | 'commandWriter' | 'clock'>) =>
  async ({ value }: Delivered<EnrollmentMessage>): Promise<void> => {
    await ctx.knex.transaction(async (trx) => {
      if (!(await ctx.readModels.upsertEnrollment(trx, value)) || !ENDED.includes(value.status)) return;
      const scope = { programId: value.program_id, integratorId: value.integrator_id, siteId: value.site_id, deviceIds: value.device_ids, createdBy: new Date(value.updated_at) };
      await ctx.commandWriter.announce(trx, await ctx.commands.cancel(trx, scope, ctx.clock()), 'CANCELED');
    });
  };
