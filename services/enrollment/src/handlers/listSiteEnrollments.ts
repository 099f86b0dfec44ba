import { SiteEnrollmentListQuery, SiteEnrollmentsParams } from '@efs/api';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiEnrollment } from '../domain/enrollment.ts';
import { siteScope } from '../principals.ts';

/** `GET /v1/site/{siteId}/enrollments`: oldest first; a non-empty list means the user is enrolled. */
export const listSiteEnrollments = (ctx: EnrollmentContext) =>
  operation({
    params: SiteEnrollmentsParams,
    query: SiteEnrollmentListQuery,
    async handle({ params, query, principal }) {
      const integratorId = siteScope(principal, params.siteId);
      const list = await ctx.store.listForSite(ctx.knex, integratorId, params.siteId, { programId: query.program_id, status: query.status, skip: query.skip, limit: query.limit });
      return { body: list.map(toApiEnrollment) };
    },
  });
