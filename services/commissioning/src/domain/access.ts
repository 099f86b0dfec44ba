import type { Principal } from '@efs/contracts';
import { AppError } from '@efs/errors';

const INTEGRATOR_KINDS: readonly Principal['kind'][] = ['CLIENT', 'SITE', 'PORTAL_SESSION', 'SYSTEM'];

/** The integrator whose sites the principal acts on; utilities and principals without one are refused. */
export function integratorOf(p: Principal): string {
  if (!INTEGRATOR_KINDS.includes(p.kind) || !p.integrator_id) throw new AppError('FORBIDDEN', 'This token does not act for an integrator');
  return p.integrator_id;
}

/** A site or portal-session principal reaches only its own site (the gateway checks it too). */
export function assertSiteAccess(p: Principal, siteId: string): string {
  const integratorId = integratorOf(p);
  if ((p.kind === 'SITE' || p.kind === 'PORTAL_SESSION') && p.site_id !== siteId) throw new AppError('FORBIDDEN', 'This token is for another site');
  return integratorId;
}
