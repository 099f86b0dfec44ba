import { z } from 'zod';
import { ErrorBodySchema, ExternalId, SessionCreateRequest, SessionResponse, SiteTokenResponse } from '@efs/api';
import { defineRoutes } from './route.ts';

const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema, 429: ErrorBodySchema, 503: ErrorBodySchema };

/** Token issuance, answered by the gateway itself after asking commissioning about the site. */
export const authRoutes = defineRoutes([
  {
    method: 'POST',
    url: '/v1/auth/site/:siteId',
    listener: 'public',
    auth: { accepts: ['client'] },
    target: 'commissioning',
    op: 'sites.get',
    gatewayHandler: 'site-token',
    summary: 'Creates a site token (one hour, this site only) for the Mobile App API',
    tags: ['Authentication'],
    schema: { params: z.object({ siteId: ExternalId }), response: { 200: SiteTokenResponse, ...errors } },
  },
  {
    method: 'POST',
    url: '/v1/sessions',
    listener: 'public',
    auth: { accepts: ['client'] },
    target: 'commissioning',
    op: 'sites.ensure',
    gatewayHandler: 'session',
    summary: 'Creates a single-use portal session token; commissions the site first when it does not exist',
    tags: ['Authentication'],
    schema: { body: SessionCreateRequest, response: { 200: SessionResponse, ...errors, 409: ErrorBodySchema } },
  },
]);
