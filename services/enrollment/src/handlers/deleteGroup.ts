import { ProgramGroupParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { utilityScope } from '../principals.ts';
import { toApiGroup } from './groupView.ts';
import { ownProgram } from './listEnrollments.ts';

/**
 * `DELETE {utility_base_url}/v1/programs/{programId}/groups/{id}`: answers the deleted group; its
 * enrollments leave it, and each is announced with its new groups.
 */
export const deleteGroup = (ctx: EnrollmentContext) =>
  operation({
    params: ProgramGroupParams,
    async handle({ params, principal }) {
      const program = await ownProgram(ctx, utilityScope(principal), params.programId);
      const group = await ctx.knex.transaction(async (trx) => {
        const g = await ctx.groups.get(trx, program.id, params.id);
        if (!g) throw new AppError('NOT_FOUND', `Group ${params.id} not found`);
        // Enrollments first, then memberships: the order a PATCH of an enrollment takes them in.
        const members = await ctx.groups.members(trx, program.id, params.id);
        for (const id of members) await ctx.store.findById(trx, id, { forUpdate: true });
        await ctx.groups.delete(trx, program.id, params.id);
        for (const id of members) {
          const e = await ctx.store.findById(trx, id);
          if (e) await ctx.writer.touch(trx, e);
        }
        return g;
      });
      return { body: toApiGroup(group) };
    },
  });
