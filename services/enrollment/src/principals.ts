import type { Principal } from '@efs/contracts';
import { AppError } from '@efs/errors';

/**
 * The integrator whose site a request acts on. Site and portal-session principals reach only
 * their own site (the gateway checks it too; a service trusts no one).
 */
export function siteScope(principal: Principal, siteId: string): string {
  if (!principal.integrator_id || principal.kind === 'UTILITY') throw new AppError('FORBIDDEN', 'This operation needs a site token');
  if ((principal.kind === 'SITE' || principal.kind === 'PORTAL_SESSION') && principal.site_id !== siteId) throw new AppError('FORBIDDEN', 'This token is for another site');
  return principal.integrator_id;
}

/** The utility a utility-API request acts for. */
export function utilityScope(principal: Principal): string {
  if (principal.kind !== 'UTILITY' || !principal.utility_id) throw new AppError('FORBIDDEN', 'This operation needs a utility API key');
  return principal.utility_id;
}

/** The integrator an internal (service-to-service) request acts for. */
export function systemScope(principal: Principal): string {
  if (principal.kind !== 'SYSTEM' || !principal.integrator_id) throw new AppError('FORBIDDEN', 'This operation is internal');
  return principal.integrator_id;
}
