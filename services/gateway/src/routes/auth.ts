import { CommissioningOperations, SessionCreateRequest, SessionTokenResponse, SiteTokenResponse } from '@efs/api';
import { sessionHandler } from '../handlers/sessions.ts';
import { siteTokenHandler } from '../handlers/siteToken.ts';
import { principalOf } from '../plugins/auth.ts';
import { PORTAL_REDEEM_PATH } from '../portal/portalListener.ts';
import { Audience, localRoute, type RouteDef } from './route.ts';

/** `POST /v1/auth/site/{siteId}`: answered by the gateway after commissioning confirms the site. */
export const siteTokenRoute = localRoute(
  {
    method: 'POST',
    url: '/v1/auth/site/:siteId',
    ...Audience.integrator,
    operation: CommissioningOperations.getSite,
    summary: 'Creates a site token (one hour, this site only) for the Mobile App API',
    tags: ['Authentication'],
    schema: { response: SiteTokenResponse },
  },
  (deps) => {
    const issue = siteTokenHandler({ ...deps, ttlSeconds: deps.siteTokenTtlSeconds });
    return async (req, reply) => reply.header('cache-control', 'no-store').send(await issue(principalOf(req), req.params.siteId));
  },
);

/** `POST /v1/sessions`: answered by the gateway after commissioning ensures the site. */
export const sessionRoute = localRoute(
  {
    method: 'POST',
    url: '/v1/sessions',
    ...Audience.integrator,
    operation: CommissioningOperations.ensureSite,
    summary: 'Creates a single-use portal session token; commissions the site first when it does not exist',
    tags: ['Authentication'],
    schema: { body: SessionCreateRequest, response: SessionTokenResponse },
  },
  (deps) => {
    const create = sessionHandler({ ...deps, ttlSeconds: deps.sessionTtlSeconds, redeemPath: PORTAL_REDEEM_PATH });
    return async (req, reply) => reply.header('cache-control', 'no-store').send(await create(principalOf(req), req.body));
  },
);

/** Token issuance, the routes the gateway answers itself. */
export const authRoutes: readonly RouteDef[] = [siteTokenRoute, sessionRoute];
