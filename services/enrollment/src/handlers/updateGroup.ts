import { ProgramGroupParams, ProgramGroupPatch } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { utilityScope } from '../principals.ts';
import { toApiGroup } from './groupView.ts';
import { ownProgram } from './listEnrollments.ts';

/** `PATCH {utility_base_url}/v1/programs/{programId}/groups/{id}` `{name}`. */
export const updateGroup = (ctx: EnrollmentContext) =>
  operation({
    params: ProgramGroupParams,
    body: ProgramGroupPatch,
    async handle({ params, body, principal }) {
      const program = await ownProgram(ctx, utilityScope(principal), params.programId);
      const group = await ctx.knex.transaction((trx) => ctx.groups.rename(trx, program.id, params.id, body.name, ctx.clock()));
      if (!group) throw new AppError('NOT_FOUND', `Group ${params.id} not found`);
      return { body: toApiGroup(group) };
    },
  });
