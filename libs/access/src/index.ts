import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';

/**
 * What a principal may reach, as every service checks it again (the gateway checked the token;
 * a service trusts no one). Each check answers the tenant the request acts for, or throws 403.
 */

const INTEGRATOR_KINDS: readonly Principal['kind'][] = ['CLIENT', 'SITE', 'PORTAL_SESSION', 'SYSTEM'];

/** The integrator a client token, site token, portal session or internal call acts for; utilities are refused. */
export function integratorOf(p: Principal): string {
  if (!INTEGRATOR_KINDS.includes(p.kind) || !p.integrator_id) throw Errors.FORBIDDEN('This token does not act for an integrator');
  return p.integrator_id;
}

/** The integrator of a request on a site's path; a site token or portal session reaches only its own site. */
export function siteIntegratorOf(p: Principal, siteId: string): string {
  const integratorId = integratorOf(p);
  if ((p.kind === 'SITE' || p.kind === 'PORTAL_SESSION') && p.site_id !== siteId) throw Errors.FORBIDDEN('This token is for another site');
  return integratorId;
}

/** The utility a utility API key acts for. */
export function utilityOf(p: Principal): string {
  if (p.kind !== 'UTILITY' || !p.utility_id) throw Errors.FORBIDDEN('This operation needs a utility API key');
  return p.utility_id;
}

/** An internal operation: only another service (a SYSTEM principal) may ask it. */
export function assertInternal(p: Principal): void {
  if (p.kind !== 'SYSTEM') throw Errors.FORBIDDEN('This operation is internal');
}

/** The integrator an internal (service-to-service) request acts for. */
export function internalIntegratorOf(p: Principal): string {
  assertInternal(p);
  if (!p.integrator_id) throw Errors.FORBIDDEN('This internal request names no integrator');
  return p.integrator_id;
}

/** The principal of a call from one service to another, on behalf of an integrator (and one of its sites). */
export const internalPrincipal = (integratorId: string, siteId: string | null = null): Principal => ({ kind: 'SYSTEM', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null });
