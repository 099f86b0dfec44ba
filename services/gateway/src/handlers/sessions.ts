import { CommissioningOperations, type SessionCreateRequestType, type SessionTokenResponseType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { call, type Transport } from '@efs/messaging';
import type { KnexSessionTokenStore } from '../auth/sessionTokens.ts';
import { requestKey } from '../forward.ts';

/**
 * `POST /v1/sessions`: commissioning commissions the site if it is new or reuses it
 * (ensureSite, whose errors are passed on as they are), then a single-use session token for
 * that site is stored (hashed) and answered with the portal address that redeems it.
 */
export function sessionHandler(deps: { transport: Transport; timeoutMs: number; graceMs: number; sessions: KnexSessionTokenStore; ttlSeconds: number; portalUrl: () => string; redeemPath: string }) {
  return async (principal: Principal, body: SessionCreateRequestType): Promise<SessionTokenResponseType> => {
    const siteId = body.site.id;
    await call(deps.transport, CommissioningOperations.ensureSite, { principal, body }, { timeoutMs: deps.timeoutMs, graceMs: deps.graceMs, ...requestKey(principal, siteId) });
    const { token, expires_at } = await deps.sessions.create({ integrator_id: principal.integrator_id!, site_id: siteId, issuer: principal.token_id }, deps.ttlSeconds);
    const portal_url = `${deps.portalUrl().replace(/\/+$/, '')}${deps.redeemPath}?token=${encodeURIComponent(token)}`;
    return { token, expires_at: expires_at.toISOString(), portal_url };
  };
}
