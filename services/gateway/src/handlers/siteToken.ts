import { CommissioningOperations, type SiteTokenResponseType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { call, type Transport } from '@efs/messaging';
import type { SignedTokens } from '../auth/signedTokens.ts';
import { requestKey } from '../forward.ts';

/**
 * `POST /v1/auth/site/{siteId}`: commissioning confirms the site is the integrator's (getSite,
 * whose 404 is passed on as is), then a stateless site token is signed for it.
 */
export function siteTokenHandler(deps: { transport: Transport; timeoutMs: number; signed: SignedTokens; ttlSeconds: number }) {
  return async (principal: Principal, siteId: string): Promise<SiteTokenResponseType> => {
    await call(deps.transport, CommissioningOperations.getSite, { principal, params: { siteId } }, { timeoutMs: deps.timeoutMs, ...requestKey(principal, siteId) });
    const { token, expires_at } = deps.signed.sign('site', { integrator_id: principal.integrator_id!, site_id: siteId, issuer: principal.token_id }, deps.ttlSeconds);
    return { site_access_token: token, expires_at: expires_at.toISOString() };
  };
}
