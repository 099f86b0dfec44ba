import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiGroup } from '../domain/group.ts';
import { ownProgram } from '../domain/enrollmentRules.ts';

/**
 * `DELETE {utility_base_url}/v1/programs/{programId}/groups/{id}`: answers the deleted group; its
 * enrollments leave it, and each is announced with its new groups.
 */
export const deleteGroup = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'store' | 'groups' | 'writer' | 'clock'>) =>
  implement(EnrollmentOperations.deleteGroup, async ({ params, principal }) => {
    const program = ownProgram(await ctx.readModels.getProgram(ctx.knex, params.programId), utilityOf(principal), params.programId);
    const group = await ctx.knex.transaction(async (trx) => {
      const g = await ctx.groups.get(trx, program.id, params.id);
      if (!g) throw Errors.NOT_FOUND(`Group ${params.id} not found`);
      // Enrollments first, then memberships: the order a PATCH of an enrollment takes them in.
      const members = await ctx.groups.members(trx, program.id, params.id);
      for (const id of members) await ctx.store.findById(trx, id, { forUpdate: true });
      await ctx.groups.delete(trx, program.id, params.id);
      // The tombstone is newer than every earlier state, so a read model that upserts by updated_at applies it.
      await ctx.writer.announceGroup(trx, { ...g, updated_at: new Date(Math.max(ctx.clock().getTime(), g.updated_at.getTime() + 1)) }, true);
      for (const id of members) {
        const e = await ctx.store.findById(trx, id);
        if (e) await ctx.writer.touch(trx, e);
      }
      return g;
    });
    return toApiGroup(group);
  });
