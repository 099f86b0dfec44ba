import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toUtilityEnrollment } from '../domain/enrollment.ts';
import { ownProgram } from '../domain/enrollmentRules.ts';

/** `GET {utility_base_url}/v1/enrollments?program_id=&status=`: the enrollments in the utility's programs. */
export const listEnrollments = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'store'>) =>
  implement(EnrollmentOperations.listEnrollments, async ({ query, principal }) => {
    const utilityId = utilityOf(principal);
    if (query.program_id !== undefined) ownProgram(await ctx.readModels.getProgram(ctx.knex, query.program_id), utilityId, query.program_id);
    const list = await ctx.store.listForUtility(ctx.knex, utilityId, { programId: query.program_id, statuses: query.status, skip: query.skip, limit: query.limit });
    return list.map(toUtilityEnrollment);
  });
