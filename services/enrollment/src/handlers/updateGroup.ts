import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiGroup } from '../domain/group.ts';
import { ownProgram } from '../domain/enrollmentRules.ts';

/** `PATCH {utility_base_url}/v1/programs/{programId}/groups/{id}` `{name}`. */
export const updateGroup = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'groups' | 'writer' | 'clock'>) =>
  implement(EnrollmentOperations.updateGroup, async ({ params, body, principal }) => {
    const program = ownProgram(await ctx.readModels.getProgram(ctx.knex, params.programId), utilityOf(principal), params.programId);
    const group = await ctx.knex.transaction(async (trx) => {
      const g = await ctx.groups.rename(trx, program.id, params.id, body.name, ctx.clock());
      if (g) await ctx.writer.announceGroup(trx, g);
      return g;
    });
    if (!group) throw Errors.NOT_FOUND(`Group ${params.id} not found`);
    return toApiGroup(group);
  });
