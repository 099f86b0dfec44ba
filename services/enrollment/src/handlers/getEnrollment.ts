import { EnrollmentIdParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toUtilityEnrollment } from '../domain/enrollment.ts';
import { utilityScope } from '../principals.ts';

/** `GET {utility_base_url}/v1/enrollments/{id}`. */
export const getEnrollment = (ctx: EnrollmentContext) =>
  operation({
    params: EnrollmentIdParams,
    async handle({ params, principal }) {
      const utilityId = utilityScope(principal);
      const e = await ctx.store.findForUtility(ctx.knex, utilityId, params.id);
      if (!e) throw new AppError('NOT_FOUND', `Enrollment ${params.id} not found`);
      return { body: toUtilityEnrollment(e) };
    },
  });
