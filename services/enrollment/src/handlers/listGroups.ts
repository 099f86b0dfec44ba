import { ProgramGroupListQuery, ProgramGroupsParams } from '@efs/api';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { utilityScope } from '../principals.ts';
import { toApiGroup } from './groupView.ts';
import { ownProgram } from './listEnrollments.ts';

/** `GET {utility_base_url}/v1/programs/{programId}/groups`. */
export const listGroups = (ctx: EnrollmentContext) =>
  operation({
    params: ProgramGroupsParams,
    query: ProgramGroupListQuery,
    async handle({ params, query, principal }) {
      const program = await ownProgram(ctx, utilityScope(principal), params.programId);
      return { body: (await ctx.groups.list(ctx.knex, program.id, query.skip, query.limit)).map(toApiGroup) };
    },
  });
