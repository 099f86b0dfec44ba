import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { registerPortal, type PortalListenerDeps } from '../portal/portalListener.ts';

const portalRoutes: FastifyPluginAsyncZod<PortalListenerDeps> = async (app, deps) => {
  registerPortal(app, deps);
};

/**
 * The portal listener's routes (see portal/portalListener.ts): the page, its session redemption,
 * branding and assets, and the site's API for portal sessions, which needs authentication and the
 * rate limit before it.
 */
export const portalRoutesPlugin = fp(portalRoutes, { name: 'efs-portal-routes', dependencies: ['efs-auth', 'efs-rate-limit'] });
