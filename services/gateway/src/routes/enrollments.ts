import { EnrollmentOperations } from '@efs/api';
import { Audience, defineRoutes, type RouteDef } from './route.ts';

const deleteSiteEnrollment = (url: string, summary: string): RouteDef => ({
  method: 'DELETE',
  url,
  ...Audience.endUser,
  operation: EnrollmentOperations.deleteEnrollment,
  summary,
  tags: ['Enrollments'],
});

/** Enrollments: the end user's (site token, public listener) and the utility's (API key, utility listener). */
export const enrollmentRoutes = defineRoutes([
  {
    method: 'POST',
    url: '/v1/site/:siteId/enrollments',
    ...Audience.endUser,
    operation: EnrollmentOperations.createEnrollment,
    summary: 'Enrolls devices of the site in a program (PENDING until the utility approves)',
    tags: ['Enrollments'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/enrollments',
    ...Audience.endUser,
    operation: EnrollmentOperations.listSiteEnrollments,
    summary: "Lists the site's enrollments; a non-empty list means the user is enrolled",
    tags: ['Enrollments'],
  },
  deleteSiteEnrollment('/v1/site/:siteId/enrollment/:enrollmentId', 'Cancels a pending enrollment or ends an active one (minimum commitment permitting)'),
  deleteSiteEnrollment('/v1/site/:siteId/enrollments/:enrollmentId', 'Alias of DELETE /v1/site/{siteId}/enrollment/{enrollmentId}'),
  {
    method: 'GET',
    url: '/v1/enrollments',
    ...Audience.utility,
    operation: EnrollmentOperations.listEnrollments,
    summary: "Lists the enrollments in the utility's programs",
    tags: ['Enrollments'],
  },
  {
    method: 'GET',
    url: '/v1/enrollments/:id',
    ...Audience.utility,
    operation: EnrollmentOperations.getEnrollment,
    summary: 'Reads an enrollment',
    tags: ['Enrollments'],
  },
  {
    method: 'PATCH',
    url: '/v1/enrollments/:id',
    ...Audience.utility,
    operation: EnrollmentOperations.updateEnrollment,
    summary: 'Approves, rejects, sends back or ends an enrollment, and sets its groups',
    tags: ['Enrollments'],
  },
  {
    method: 'GET',
    url: '/v1/programs/:programId/groups',
    ...Audience.utility,
    operation: EnrollmentOperations.listGroups,
    summary: "Lists the program's enrollment groups",
    tags: ['Groups'],
  },
  {
    method: 'POST',
    url: '/v1/programs/:programId/groups',
    ...Audience.utility,
    operation: EnrollmentOperations.createGroup,
    summary: 'Creates an enrollment group of the program',
    tags: ['Groups'],
  },
  {
    method: 'PATCH',
    url: '/v1/programs/:programId/groups/:id',
    ...Audience.utility,
    operation: EnrollmentOperations.updateGroup,
    summary: 'Renames an enrollment group',
    tags: ['Groups'],
  },
  {
    method: 'DELETE',
    url: '/v1/programs/:programId/groups/:id',
    ...Audience.utility,
    operation: EnrollmentOperations.deleteGroup,
    summary: 'Deletes an enrollment group; its enrollments leave it',
    tags: ['Groups'],
  },
]);
