import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { createHash } from 'node:crypto';
import { PortalRedeemRequest, PortalSessionResponse, type PortalRedeemRequestType, type PortalSessionResponseType } from '@efs/api';
import { Errors } from '@efs/errors';
import { sendError } from '@efs/http';
import type { Logger } from '@efs/logging';
import type { CredentialCache } from '../auth/credentialCache.ts';
import type { KnexSessionTokenStore } from '../auth/sessionTokens.ts';
import type { SignedTokens } from '../auth/signedTokens.ts';
import { kindOf } from '../auth/tokens.ts';
import { routeHandler } from '../forward.ts';
import { rateLimitHeaders, type FixedWindowRateLimiter } from '../limits/rateLimiter.ts';
import { routeOptions, type RouteDef, type RouteDeps } from '../routes/route.ts';
import { refusedRequests } from '../plugins/refusedRequests.ts';
import { brandingCss, brandingSources } from './branding.ts';
import { PORTAL_DEFAULT_POLICY, portalPagePolicy, type FramePolicy } from './framing.ts';
import type { PortalAssets } from './portalAssets.ts';
import type { PortalSettings, PortalSettingsStore } from './portalSettingsStore.ts';
import type { OidcClients } from './oidcClients.ts';
import type { KnexPortalLoginStore } from './portalLoginStore.ts';
import { registerStandalonePortal } from './standalonePortal.ts';
import { STANDALONE_PATHS } from './standalonePaths.ts';

/** Where the portal opens: `{portal_url}/auth/session_token?token=` (GET the page, POST to redeem). */
export const PORTAL_REDEEM_PATH = '/auth/session_token';
const BRANDING_PATH = '/branding/:integratorId/theme.css';

/**
 * The end user's API routes the portal page calls on its own origin: the routes that say they are
 * served on the portal (`portal: true`), answering portal sessions only. Same origin means no
 * CORS, a `connect-src 'self'` policy, and one host name for the whole portal; the routes are the
 * very same definitions (validation, handlers, rate limits) as on the public listener.
 */
export function portalApiRoutes(routes: readonly RouteDef[]): RouteDef[] {
  return routes
    .filter((r) => r.portal)
    .map((r) => {
      if (r.listener !== 'public' || !r.auth.accepts.includes('portalSession')) throw new Error(`route ${r.method} ${r.url} is served on the portal but is not a public route that accepts portal sessions`);
      return { ...r, auth: { accepts: ['portalSession'] as const } };
    });
}

/** Every method and path the portal listener serves (for 405 answers). */
export function portalRouteTable(routes: readonly RouteDef[]): { method: string; url: string }[] {
  return [
    { method: 'GET', url: PORTAL_REDEEM_PATH },
    { method: 'POST', url: PORTAL_REDEEM_PATH },
    { method: 'GET', url: BRANDING_PATH },
    { method: 'GET', url: STANDALONE_PATHS.portal },
    { method: 'GET', url: STANDALONE_PATHS.login },
    { method: 'GET', url: STANDALONE_PATHS.callback },
    { method: 'GET', url: STANDALONE_PATHS.logout },
    { method: 'POST', url: STANDALONE_PATHS.logout },
    { method: 'POST', url: STANDALONE_PATHS.session },
    ...portalApiRoutes(routes).map((r) => ({ method: r.method, url: r.url })),
  ];
}

/** What the portal needs of the gateway's composition root. */
export interface PortalOptions {
  sessions: KnexSessionTokenStore;
  settings: PortalSettingsStore;
  signed: SignedTokens;
  credentials: CredentialCache;
  /** Lifetime of a portal session. */
  ttlSeconds: number;
  sandboxIntegratorId: string;
  /** SANDBOX_PORTAL_FRAME_ANCESTORS; undefined: any origin may frame the sandbox integrator's portal. */
  sandboxFrameAncestors: readonly string[] | undefined;
  /** The built page; undefined when `npm run build -w @efs/portal` has not run. */
  assets: PortalAssets | undefined;
  /** The standalone portals: their settings by host name, and their sign-ins and logins. */
  standalone: { clients: OidcClients; logins: KnexPortalLoginStore; loginTtlSeconds: number };
  logger: Logger;
}

/** And the site's API routes, with what their handlers use (as on the API listeners), and the limiter of anonymous routes. */
export interface PortalListenerDeps extends PortalOptions {
  routes: readonly RouteDef[];
  routeDeps: RouteDeps;
  limiter: FixedWindowRateLimiter;
  /** Requests per window from one client address to the routes that take no credential. */
  addressLimit: number;
}

const wantsHtml = (req: FastifyRequest) => /\btext\/html\b/.test(String(req.headers.accept ?? ''));

const versionOf = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('base64url').slice(0, 12);

/**
 * The portal listener: the page at `/auth/session_token?token=` (framed only by the integrator's
 * allowed origins), the redemption the page makes (`POST`, answering a portal session the page
 * keeps in memory and sends as a bearer token: no cookie, so it works in a cross-site iframe with
 * third-party cookies blocked), the integrator's style sheet, the built assets, and the site's API.
 */
export function registerPortal(app: FastifyInstance, deps: PortalListenerDeps): void {
  if (!deps.assets) deps.logger.warn('the portal UI is not built (npm run build -w @efs/portal): the portal page answers 503');

  // Nothing on this listener but the page itself may be framed or load anything.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', PORTAL_DEFAULT_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    return payload;
  });

  // The routes that take no credential have no token to count against: they count per client
  // address instead (the same limiter, windows and headers), so guessing at links is slowed down.
  const refusedByAddress = refusedRequests('portal', 'rate_limit');
  const perAddress: onRequestHookHandler = (req, reply, done) => {
    const decision = deps.limiter.hit(`address:${req.ip}`, deps.addressLimit);
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) refusedByAddress();
    if (!decision.allowed) return void sendError(reply, Errors.RATE_LIMITED(`Over the limit of ${decision.limit} requests per ${decision.windowSeconds} s from one address; retry in ${decision.resetSeconds} s`));
    done();
  };

  const framingOf = (integratorId: string, settings: PortalSettings | undefined): FramePolicy => {
    if (integratorId === deps.sandboxIntegratorId) return deps.sandboxFrameAncestors ? { any: false, origins: deps.sandboxFrameAncestors } : { any: true };
    return { any: false, origins: settings?.frame_ancestors ?? [] };
  };

  const page = (reply: FastifyReply, status: number, framing: FramePolicy, settings: PortalSettings | undefined, boot: Record<string, unknown>) => {
    if (!deps.assets) throw Errors.SERVICE_UNAVAILABLE('The portal UI is not built on this server');
    const branding = settings?.branding ?? {};
    const sources = brandingSources(branding);
    const hasBranding = Object.keys(branding).length > 0;
    const html = deps.assets.page({
      ...(hasBranding && settings ? { brandingHref: `/branding/${encodeURIComponent(settings.integrator_id)}/theme.css?v=${versionOf(branding)}` } : {}),
      faviconUrl: branding.favicon_url ?? '/favicon.svg',
      boot: { ...boot, integrator_name: settings?.integrator_name ?? null, logo_url: branding.logo_url ?? null },
    });
    return reply
      .code(status)
      .header('content-security-policy', portalPagePolicy({ framing, imageSources: sources.images, fontSources: sources.fonts }))
      .type('text/html; charset=utf-8')
      .send(html);
  };

  /** A refused link: a page the end user can read (framed as the integrator allows, when known), or the error body for API clients. */
  const refuse = (req: FastifyRequest, reply: FastifyReply, message: string, framing: FramePolicy = { any: false, origins: [] }, settings?: PortalSettings) => {
    if (!wantsHtml(req) || !deps.assets) throw Errors.UNAUTHORIZED(message);
    return page(reply, 401, framing, settings, { state: 'refused', message });
  };

  /**
   * The integrator whose standalone portal this host name is, if any: on its host only its own
   * links open and only its own branding is served (never another integrator's portal there).
   */
  const hostOwner = async (req: FastifyRequest) => (await deps.standalone.clients.forHost(req.hostname.toLowerCase()))?.integrator_id;

  app.get(PORTAL_REDEEM_PATH, { onRequest: perAddress }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || token === '') return refuse(req, reply, 'This address has no session token: open the portal from your app.');
    if (kindOf(token) !== 'sessionToken') return refuse(req, reply, 'This is not a portal link: open the portal from your app.');
    const found = await deps.sessions.peek(token);
    const owner = await hostOwner(req);
    if (!found || (owner !== undefined && owner !== found.integrator_id)) return refuse(req, reply, 'This portal link is not valid: open the portal again from your app.');
    const settings = await deps.settings.get(found.integrator_id);
    const framing = framingOf(found.integrator_id, settings);
    if (found.redeemed) return refuse(req, reply, 'This portal link has already been used. Each link opens the portal once: open the portal again from your app.', framing, settings);
    if (found.expired) return refuse(req, reply, 'This portal link has expired. Open the portal again from your app.', framing, settings);
    if (found.issuer && deps.credentials.isRevoked(found.issuer)) return refuse(req, reply, 'This portal link is no longer valid. Open the portal again from your app.', framing, settings);
    return page(reply, 200, framing, settings, { state: 'ready' });
  });

  app.post(PORTAL_REDEEM_PATH, { onRequest: perAddress, schema: { body: PortalRedeemRequest, response: { 200: PortalSessionResponse } } }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const { token } = req.body as PortalRedeemRequestType;
    if (kindOf(token) !== 'sessionToken') throw Errors.UNAUTHORIZED('Not a portal session token');
    const owner = await hostOwner(req);
    if (owner !== undefined && (await deps.sessions.peek(token))?.integrator_id !== owner) throw Errors.UNAUTHORIZED('This portal link is not valid here. Open the portal again from your app.');
    const redeemed = await deps.sessions.redeem(token);
    if (!redeemed) throw Errors.UNAUTHORIZED('This portal link has already been used, has expired or is not valid. Open the portal again from your app.');
    if (redeemed.issuer && deps.credentials.isRevoked(redeemed.issuer)) throw Errors.UNAUTHORIZED('This portal link is no longer valid. Open the portal again from your app.');
    const portalSession = deps.signed.sign('portalSession', redeemed, deps.ttlSeconds);
    const answer: PortalSessionResponseType = { session: portalSession.token, expires_at: portalSession.expires_at.toISOString(), site_id: redeemed.site_id };
    return reply.code(200).send(answer);
  });

  app.get(BRANDING_PATH, { onRequest: perAddress }, async (req, reply) => {
    const { integratorId } = req.params as { integratorId: string };
    // An unknown integrator gets the same answer as one without branding (the portal's defaults):
    // the style sheet never tells whether an integrator id exists. On a standalone host, so does
    // every integrator but the host's own.
    const owner = await hostOwner(req);
    const settings = owner === undefined || owner === integratorId ? await deps.settings.get(integratorId) : undefined;
    // The page names the branding's version in the address, so a change is seen at the next page load.
    return reply.header('cache-control', 'public, max-age=86400').type('text/css; charset=utf-8').send(brandingCss(settings?.branding ?? {}));
  });

  registerStandalonePortal(app, {
    ...deps.standalone,
    settings: (id) => deps.settings.get(id),
    signed: deps.signed,
    transport: deps.routeDeps.transport,
    timeoutMs: deps.routeDeps.timeoutMs,
    portalSessionTtlSeconds: deps.ttlSeconds,
    logger: deps.logger,
    perAddress,
    // Never framed: a page that signs in is nobody's iframe.
    page: deps.assets ? (reply, status, settings, boot) => page(reply, status, { any: false, origins: [] }, settings, boot) : undefined,
  });

  for (const path of deps.assets?.paths() ?? []) {
    const asset = deps.assets!.file(path)!;
    const hashed = path.startsWith('/assets/');
    app.get(path, async (req, reply) => {
      reply.header('etag', asset.etag).header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }

  // Authentication and the rate limit (plugins registered before this one) apply through each route's auth rule.
  for (const route of portalApiRoutes(deps.routes)) app.route({ ...routeOptions(route), handler: routeHandler(route, deps.routeDeps) });
}
