import { CommissioningOperations, SessionCreateRequest, SessionTokenResponse, SiteTokenResponse } from '@efs/api';
import { Audience, defineRoute, type RouteDef } from './route.ts';

/** `POST /v1/auth/site/{siteId}`: answered by the gateway after commissioning confirms the site. */
export const siteTokenRoute = defineRoute({
  method: 'POST',
  url: '/v1/auth/site/:siteId',
  ...Audience.integrator,
  operation: CommissioningOperations.getSite,
  summary: 'Creates a site token (one hour, this site only) for the Mobile App API',
  tags: ['Authentication'],
  schema: { response: SiteTokenResponse },
});

/** `POST /v1/sessions`: answered by the gateway after commissioning ensures the site. */
export const sessionRoute = defineRoute({
  method: 'POST',
  url: '/v1/sessions',
  ...Audience.integrator,
  operation: CommissioningOperations.ensureSite,
  summary: 'Creates a single-use portal session token; commissions the site first when it does not exist',
  tags: ['Authentication'],
  schema: { body: SessionCreateRequest, response: SessionTokenResponse },
});

/** Token issuance, the routes the gateway answers itself. */
export const authRoutes: readonly RouteDef[] = [siteTokenRoute, sessionRoute];
