import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiGroup } from '../domain/group.ts';
import { ownProgram } from '../domain/enrollmentRules.ts';

/** `GET {utility_base_url}/v1/programs/{programId}/groups`. */
export const listGroups = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'groups'>) =>
  implement(EnrollmentOperations.listGroups, async ({ params, query, principal }) => {
    const program = ownProgram(await ctx.readModels.getProgram(ctx.knex, params.programId), utilityOf(principal), params.programId);
    return (await ctx.groups.list(ctx.knex, program.id, query.skip, query.limit)).map(toApiGroup);
  });
