import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toUtilityEnrollment } from '../domain/enrollment.ts';

/** `GET {utility_base_url}/v1/enrollments/{id}`. */
export const getEnrollment = (ctx: Pick<EnrollmentContext, 'knex' | 'store'>) =>
  implement(EnrollmentOperations.getEnrollment, async ({ params, principal }) => {
    const utilityId = utilityOf(principal);
    const e = await ctx.store.findForUtility(ctx.knex, utilityId, params.id);
    if (!e) throw Errors.NOT_FOUND(`Enrollment ${params.id} not found`);
    return toUtilityEnrollment(e);
  });
