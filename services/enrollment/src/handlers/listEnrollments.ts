import { UtilityEnrollmentListQuery } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toUtilityEnrollment } from '../domain/enrollment.ts';
import type { ProgramView } from '../domain/readModels.ts';
import { utilityScope } from '../principals.ts';

/** The program, if it is the utility's own; another utility's program is answered as unknown. */
export async function ownProgram(ctx: EnrollmentContext, utilityId: string, programId: string): Promise<ProgramView> {
  const program = await ctx.readModels.getProgram(ctx.knex, programId);
  if (!program || program.utility_id !== utilityId) throw new AppError('NOT_FOUND', `Program ${programId} not found`);
  return program;
}

/** `GET {utility_base_url}/v1/enrollments?program_id=&status=`: the enrollments in the utility's programs. */
export const listEnrollments = (ctx: EnrollmentContext) =>
  operation({
    query: UtilityEnrollmentListQuery,
    async handle({ query, principal }) {
      const utilityId = utilityScope(principal);
      if (query.program_id !== undefined) await ownProgram(ctx, utilityId, query.program_id);
      const list = await ctx.store.listForUtility(ctx.knex, utilityId, { programId: query.program_id, status: query.status, skip: query.skip, limit: query.limit });
      return { body: list.map(toUtilityEnrollment) };
    },
  });
