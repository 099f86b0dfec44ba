import { siteIntegratorOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiEnrollment } from '../domain/enrollment.ts';

/**
 * `DELETE /v1/site/{siteId}/enrollment/{id}` (and the `/enrollments/{id}` alias): cancels a
 * PENDING or NEEDS_ACTION enrollment, ends an ACTIVE one once the minimum commitment is over,
 * and answers an already ended one unchanged. Decided on the locked row, so a utility decision
 * racing it either comes before or after, never halfway.
 */
export const deleteEnrollment = (ctx: Pick<EnrollmentContext, 'knex' | 'store' | 'writer'>) =>
  implement(EnrollmentOperations.deleteEnrollment, async ({ params, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const result = await ctx.knex.transaction(async (trx) => {
      const e = await ctx.store.findForSite(trx, integratorId, params.siteId, params.enrollmentId, { forUpdate: true });
      if (!e) throw Errors.NOT_FOUND(`Enrollment ${params.enrollmentId} not found`);
      return ctx.writer.apply(trx, e, { type: 'UNENROLL' }, { kind: 'USER', id: params.siteId });
    });
    return toApiEnrollment(result.enrollment);
  });
