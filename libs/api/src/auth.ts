import { z } from 'zod';
import { DateTime } from './common.ts';
import { SiteEnsureRequest } from './commissioning.ts';

/** `POST /v1/auth/site/{siteId}` (client token): a site token for that one site, valid one hour. */
export const SiteTokenResponse = z
  .object({
    site_access_token: z.string().describe('Bearer token of the Mobile App API for this site only (prefix efs_st_).'),
    expires_at: DateTime.describe('One hour after creation; request a new one afterwards.'),
  })
  .meta({ id: 'SiteTokenResponse' });
export type SiteTokenResponseType = z.infer<typeof SiteTokenResponse>;

/** `POST /v1/sessions` (client token) answer: a single-use portal session token and the address that redeems it. */
export const SessionTokenResponse = z
  .object({
    token: z.string().describe('Single-use portal session token (prefix efs_ss_), redeemed within 10 minutes.'),
    expires_at: DateTime.describe('Latest time the token can be redeemed.'),
    portal_url: z.string().describe('{portal_url}/auth/session_token?token=...: load it in an iframe or WebView.'),
  })
  .meta({ id: 'SessionResponse' });
export type SessionTokenResponseType = z.infer<typeof SessionTokenResponse>;

/**
 * `POST /v1/sessions` body: the site (commissioned when new as with POST /v1/commission and
 * `can_auto_enroll` false; `site.id` alone is enough when it exists) and optionally its devices.
 * The gateway passes it to commissioning's ensureSite, which takes the same schema.
 */
export const SessionCreateRequest = SiteEnsureRequest.meta({ id: 'SessionCreateRequest' });
export type SessionCreateRequestType = z.infer<typeof SessionCreateRequest>;

/** `POST {portal_url}/auth/session_token` body: the portal page redeems the token of its address. */
export const PortalRedeemRequest = z.object({ token: z.string().min(1).max(512) }).meta({ id: 'PortalRedeemRequest' });
export type PortalRedeemRequestType = z.infer<typeof PortalRedeemRequest>;

/** Its answer: a portal session for the one site, sent by the page as `Authorization: Bearer` (never a cookie). */
export const PortalSessionResponse = z
  .object({
    session: z.string().describe('Portal session (prefix efs_ps_) for this site only; kept in the page\'s memory.'),
    expires_at: DateTime,
    site_id: z.string(),
  })
  .meta({ id: 'PortalSessionResponse' });
export type PortalSessionResponseType = z.infer<typeof PortalSessionResponse>;
