import { siteIntegratorOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiEnrollment } from '../domain/enrollment.ts';
import { CurrentStatuses } from '../domain/lifecycle.ts';

/** `GET /v1/site/{siteId}/enrollments`: oldest first; by default the current ones, so a non-empty list means the user is enrolled. */
export const listSiteEnrollments = (ctx: Pick<EnrollmentContext, 'knex' | 'store'>) =>
  implement(EnrollmentOperations.listSiteEnrollments, async ({ params, query, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const list = await ctx.store.listForSite(ctx.knex, integratorId, params.siteId, { programId: query.program_id, statuses: query.status ?? CurrentStatuses, skip: query.skip, limit: query.limit });
    return list.map(toApiEnrollment);
  });
