import type { Principal } from '@efs/contracts';
import { AppError } from '@efs/errors';

/** The integrator of a principal on a site's path; a site or portal-session token reaches only its own site. */
export function siteIntegrator(p: Principal, siteId: string): string {
  if (!['CLIENT', 'SITE', 'PORTAL_SESSION', 'SYSTEM'].includes(p.kind) || !p.integrator_id) throw new AppError('FORBIDDEN', 'This token does not act for an integrator');
  if ((p.kind === 'SITE' || p.kind === 'PORTAL_SESSION') && p.site_id !== siteId) throw new AppError('FORBIDDEN', 'This token is for another site');
  return p.integrator_id;
}

/** The utility a utility API key acts for. */
export function utilityOf(p: Principal): string {
  if (p.kind !== 'UTILITY' || !p.utility_id) throw new AppError('FORBIDDEN', 'Only a utility API key may manage programs');
  return p.utility_id;
}
