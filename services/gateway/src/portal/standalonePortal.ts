import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { parseCookie, stringifySetCookie } from 'cookie';
import * as oidc from 'openid-client';
import { z } from 'zod';
import { CommissioningOperations, PortalSessionResponse, type PortalSessionResponseType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { AppError, Errors } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { call, type Transport } from '@efs/messaging';
import type { SignedTokens } from '../auth/signedTokens.ts';
import { requestKey } from '../forward.ts';
import type { OidcClients } from './oidcClients.ts';
import { ProviderUnavailableError } from './oidcClients.ts';
import { isLoopbackHost, type OidcClientSettings } from './oidcSettingsStore.ts';
import type { KnexPortalLoginStore, PortalLogin } from './portalLoginStore.ts';
import type { PortalSettings } from './portalSettingsStore.ts';
import { STANDALONE_PATHS } from './standalonePaths.ts';

/** What a sign-in is kept under: its state (in the callback's address) and its browser's secret (in a cookie). */
const signInKey = (state: string, binding: string) => `${state}.${binding}`;

/** A sign-in must come back from the provider within this. */
const SIGN_IN_TTL_S = 600;
/** The portal session the page gets for a standalone login lives this long at most; the page renews it with its cookie. */
export const STANDALONE_BEARER_TTL_S = 60;
/** Claims naming more sites than this are cut: the first ones are checked and offered. */
const MAX_CLAIMED_SITES = 20;

export const PortalSessionRequest = z.strictObject({ site_id: z.string().min(1).max(255).optional() });

/** What the standalone portal needs of the portal listener and the gateway. */
export interface StandaloneDeps {
  clients: OidcClients;
  logins: KnexPortalLoginStore;
  settings: (integratorId: string) => Promise<PortalSettings | undefined>;
  signed: SignedTokens;
  transport: Transport;
  timeoutMs: number;
  /** Lifetime of a standalone login (its cookie). */
  loginTtlSeconds: number;
  /** PORTAL_SESSION_TTL_S: the bearer the page gets lives no longer. */
  portalSessionTtlSeconds: number;
  logger: Logger;
  /** The per-address limit of the portal's routes that take no credential. */
  perAddress: onRequestHookHandler;
  /** The portal page (built UI) with this boot data, or undefined when the UI is not built. */
  page: ((reply: FastifyReply, status: number, settings: PortalSettings | undefined, boot: Record<string, unknown>) => FastifyReply) | undefined;
}

/** Where the request is: the scheme (https for any host but loopback ones: TLS ends at the ingress), host with port, host name. */
function placeOf(req: FastifyRequest): { origin: string; hostname: string; secure: boolean } {
  const hostname = req.hostname.toLowerCase();
  const scheme = isLoopbackHost(hostname) ? req.protocol : 'https';
  // An ingress may forward the default port (`energy.acme.com:443`): the callback registered at the provider has none.
  const host = scheme === 'https' ? req.host.replace(/:443$/, '') : req.host;
  return { origin: `${scheme}://${host}`, hostname, secure: scheme === 'https' };
}

/**
 * Cookie names: `__Host-` (Secure, no Domain, Path=/: bound to exactly this host) where the scheme
 * allows it; plain names on http loopback, where a browser takes no Secure cookie... except
 * Chromium's localhost, which a test must not rely on.
 */
const cookieName = (what: 'session' | 'signIn', secure: boolean) => `${secure ? '__Host-' : ''}${what === 'session' ? 'efs_portal_login' : 'efs_portal_sign_in'}`;

function readCookie(req: FastifyRequest, what: 'session' | 'signIn'): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  const value = parseCookie(header)[cookieName(what, placeOf(req).secure)];
  return value && /^[A-Za-z0-9_-]{1,200}$/.test(value) ? value : undefined;
}

function setCookie(reply: FastifyReply, req: FastifyRequest, what: 'session' | 'signIn', value: string, maxAgeSeconds: number): void {
  const { secure } = placeOf(req);
  const header = stringifySetCookie({ name: cookieName(what, secure), value, httpOnly: true, secure, sameSite: 'lax', path: '/', maxAge: maxAgeSeconds });
  const before = reply.getHeader('set-cookie');
  reply.header('set-cookie', [...(Array.isArray(before) ? before : before === undefined ? [] : [String(before)]), header]);
}

const errorCode = (v: unknown) => (typeof v === 'string' && /^[a-z_]{1,40}$/.test(v) ? v : undefined);

/** Why a sign-in could not finish, in words for the end user; `status` of the page. */
interface Failure {
  status: number;
  title: string;
  message: string;
}

const failure = (status: number, title: string, message: string): Failure => ({ status, title, message });

/** A claimed site as commissioning sees it for the integrator. */
type SiteCheck = 'ok' | 'unknown' | 'not_commissioned';

/**
 * The standalone white-label portal on the integrators' own host names: `/` (signing in first),
 * `/auth/login`, `/auth/oidc/callback`, `/auth/logout`, and `POST /auth/portal_session`, where
 * the page trades its login cookie for the same bearer portal session the embedded page gets, so
 * the site's API routes and the UI are the embedded portal's. The host name picks the
 * integrator; an unknown host name gets a plain 404, never someone's portal.
 */
export function registerStandalonePortal(app: FastifyInstance, deps: StandaloneDeps): void {
  const log = deps.logger.child({ component: 'standalone-portal' });

  const plain = (reply: FastifyReply, status: number, title: string, message: string, retry?: { href: string; label: string }) =>
    reply
      .code(status)
      .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>` +
          `<body><main><h1>${title}</h1><p>${message}</p>${retry ? `<p><a href="${retry.href}">${retry.label}</a></p>` : ''}</main></body></html>`,
      );

  /** A readable page with a way to start again: the portal UI with the integrator's branding, or a plain page when the UI is not built. */
  const stopped = (reply: FastifyReply, f: Failure, settings: PortalSettings | undefined, retry = { href: STANDALONE_PATHS.login, label: 'Sign in again' }) => {
    reply.header('cache-control', 'no-store');
    if (!deps.page) return plain(reply, f.status, escapeHtml(f.title), escapeHtml(f.message), retry);
    return deps.page(reply, f.status, settings, { state: 'refused', title: f.title, message: f.message, retry_url: retry.href, retry_label: retry.label });
  };

  /** A plain page for a browser (nobody's portal, no branding); the error body for anything else. */
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    if (!/\btext\/html\b/.test(String(req.headers.accept ?? ''))) throw Errors.NOT_FOUND('There is no portal at this address');
    return plain(reply.header('cache-control', 'no-store'), 404, 'Not found', 'There is no portal at this address.');
  };

  /** The integrator whose portal answers on the request's host name. */
  const portalOf = async (req: FastifyRequest) => {
    const client = await deps.clients.forHost(placeOf(req).hostname);
    if (!client) return undefined;
    return { client, settings: await deps.settings(client.integrator_id) };
  };

  const unreachable = (name: string | undefined) =>
    failure(502, 'We could not reach the sign-in service', `${name ? `${name}’s` : 'The'} sign-in service did not answer. Try again in a moment.`);

  app.get(STANDALONE_PATHS.portal, { onRequest: deps.perAddress }, async (req, reply) => {
    const portal = await portalOf(req);
    if (!portal) return notFound(req, reply);
    const login = await currentLogin(req, portal.client);
    if (!login) return reply.header('cache-control', 'no-store').redirect(STANDALONE_PATHS.login, 303);
    reply.header('cache-control', 'no-store');
    if (!deps.page) return plain(reply, 503, 'The portal is not available', 'The portal is not installed on this server yet. Try again later.');
    return deps.page(reply, 200, portal.settings, { state: 'signed_in', sites: login.site_ids, session_url: STANDALONE_PATHS.session, logout_url: STANDALONE_PATHS.logout });
  });

  app.get(STANDALONE_PATHS.login, { onRequest: deps.perAddress }, async (req, reply) => {
    const portal = await portalOf(req);
    if (!portal) return notFound(req, reply);
    let configuration: oidc.Configuration;
    try {
      configuration = await deps.clients.configuration(portal.client);
    } catch (err) {
      log.warn({ err, integrator_id: portal.client.integrator_id }, 'OpenID provider discovery failed');
      return stopped(reply, unreachable(portal.settings?.integrator_name), portal.settings, { href: STANDALONE_PATHS.login, label: 'Try again' });
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const code_verifier = oidc.randomPKCECodeVerifier();
    // A secret of this browser's, never in a URL: the sign-in is kept under the state and it
    // together, so a callback address in anyone else's hands (a log, a link) finishes nothing.
    const binding = oidc.randomState();
    let target: URL;
    try {
      target = oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: `${placeOf(req).origin}${STANDALONE_PATHS.callback}`,
        scope: portal.client.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(code_verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
    } catch (err) {
      // A provider whose metadata names no usable authorization endpoint.
      log.warn({ err, integrator_id: portal.client.integrator_id }, 'OpenID provider metadata has no usable authorization endpoint');
      return stopped(reply, unreachable(portal.settings?.integrator_name), portal.settings, { href: STANDALONE_PATHS.login, label: 'Try again' });
    }
    await deps.logins.startSignIn(signInKey(state, binding), { integrator_id: portal.client.integrator_id, host: placeOf(req).hostname, code_verifier, nonce }, SIGN_IN_TTL_S);
    setCookie(reply, req, 'signIn', binding, SIGN_IN_TTL_S);
    return reply.header('cache-control', 'no-store').redirect(target.href, 303);
  });

  app.get(STANDALONE_PATHS.callback, { onRequest: deps.perAddress }, async (req, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const portal = await portalOf(req);
    if (!portal) return notFound(req, reply);
    const result = await finishSignIn(req, portal.client, portal.settings);
    // The sign-in cookie has done its job either way.
    setCookie(reply, req, 'signIn', '', 0);
    if ('status' in result) return stopped(reply, result, portal.settings);
    // A new cookie on every sign-in (the one before, if any, ends on the server too).
    const previous = readCookie(req, 'session');
    if (previous) await deps.logins.endLogin(previous);
    const { cookie } = await deps.logins.createLogin(result, deps.loginTtlSeconds);
    setCookie(reply, req, 'session', cookie, deps.loginTtlSeconds);
    return reply.header('cache-control', 'no-store').redirect(STANDALONE_PATHS.portal, 303);
  });

  const logout = async (req: FastifyRequest, reply: FastifyReply) => {
    const portal = await portalOf(req);
    if (!portal) return notFound(req, reply);
    const cookie = readCookie(req, 'session');
    const ended = cookie ? await deps.logins.endLogin(cookie) : undefined;
    setCookie(reply, req, 'session', '', 0);
    reply.header('cache-control', 'no-store');
    if (ended) {
      const toProvider = await endSessionUrl(req, portal.client, ended);
      if (toProvider) return reply.redirect(toProvider, 303);
    }
    return stopped(reply, failure(200, 'You have signed out', 'You are signed out of the portal.'), portal.settings, { href: STANDALONE_PATHS.login, label: 'Sign in' });
  };
  app.get(STANDALONE_PATHS.logout, { onRequest: deps.perAddress }, logout);
  app.post(STANDALONE_PATHS.logout, { onRequest: deps.perAddress }, logout);

  app.post(STANDALONE_PATHS.session, { onRequest: deps.perAddress, schema: { body: PortalSessionRequest, response: { 200: PortalSessionResponse } } }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const client = await deps.clients.forHost(placeOf(req).hostname);
    if (!client) throw Errors.NOT_FOUND('There is no portal at this address');
    const login = await currentLogin(req, client);
    if (!login) throw Errors.UNAUTHORIZED('You are not signed in (or your session ended): sign in again');
    const body = req.body as z.infer<typeof PortalSessionRequest>;
    const siteId = body.site_id ?? (login.site_ids.length === 1 ? login.site_ids[0] : undefined);
    if (siteId === undefined) throw Errors.VALIDATION_ERROR('Choose one of your sites: site_id is required');
    if (!login.site_ids.includes(siteId)) throw Errors.FORBIDDEN('This site is not one of yours');
    const remaining = Math.floor((login.expires_at.getTime() - Date.now()) / 1000);
    const ttl = Math.max(1, Math.min(STANDALONE_BEARER_TTL_S, deps.portalSessionTtlSeconds, remaining));
    const session = deps.signed.sign('portalSession', { integrator_id: login.integrator_id, site_id: siteId }, ttl);
    const answer: PortalSessionResponseType = { session: session.token, expires_at: session.expires_at.toISOString(), site_id: siteId };
    return reply.code(200).send(answer);
  });

  /** The live login of the request's cookie, when it is for this integrator. */
  async function currentLogin(req: FastifyRequest, client: OidcClientSettings): Promise<PortalLogin | undefined> {
    const cookie = readCookie(req, 'session');
    if (!cookie) return undefined;
    const login = await deps.logins.findLogin(cookie);
    return login && login.integrator_id === client.integrator_id ? login : undefined;
  }

  /** The provider's logout address when it has one (RP-initiated logout), back to our logout page after. */
  async function endSessionUrl(req: FastifyRequest, client: OidcClientSettings, login: PortalLogin): Promise<string | undefined> {
    try {
      const configuration = await deps.clients.configuration(client);
      if (!configuration.serverMetadata().end_session_endpoint) return undefined;
      return oidc.buildEndSessionUrl(configuration, {
        post_logout_redirect_uri: `${placeOf(req).origin}${STANDALONE_PATHS.logout}`,
        ...(login.id_token ? { id_token_hint: login.id_token } : {}),
      }).href;
    } catch (err) {
      // Signed out here whatever the provider says; its own session then lasts as it decides.
      log.warn({ err, integrator_id: client.integrator_id }, 'no RP-initiated logout: the provider could not be reached');
      return undefined;
    }
  }

  /** The callback's checks, in order; the login to start, or why not. */
  async function finishSignIn(req: FastifyRequest, client: OidcClientSettings, settings: PortalSettings | undefined): Promise<Omit<PortalLogin, 'expires_at'> | Failure> {
    const query = req.query as Record<string, unknown>;
    const state = typeof query.state === 'string' ? query.state : undefined;
    const startAgain = 'Start again to sign in.';
    if (state === undefined) return failure(400, 'This sign-in cannot be finished', `The address is not the end of a sign-in. ${startAgain}`);
    const binding = readCookie(req, 'signIn');
    if (!binding) return failure(400, 'This sign-in cannot be finished', `It was not started in this browser, or it took too long. ${startAgain}`);
    const taken = await deps.logins.takeSignIn(signInKey(state, binding));
    if (!taken.ok) {
      const why = taken.reason === 'used' ? 'This sign-in has been used already.' : taken.reason === 'expired' ? 'This sign-in took too long.' : 'It was not started in this browser, or is not known here.';
      return failure(400, 'This sign-in cannot be finished', `${why} ${startAgain}`);
    }
    if (taken.signIn.integrator_id !== client.integrator_id || taken.signIn.host !== placeOf(req).hostname) {
      return failure(400, 'This sign-in cannot be finished', `It was started on another portal. ${startAgain}`);
    }
    const providerError = errorCode(query.error);
    if (query.error !== undefined) {
      if (providerError === 'access_denied') return failure(401, 'Sign-in cancelled', 'You cancelled the sign-in, or it was refused. You can start again at any time.');
      return failure(401, 'The sign-in did not complete', `The sign-in service answered with an error${providerError ? ` (${providerError})` : ''}. ${startAgain}`);
    }

    let configuration: oidc.Configuration;
    try {
      configuration = await deps.clients.configuration(client);
    } catch (err) {
      log.warn({ err, integrator_id: client.integrator_id }, 'OpenID provider discovery failed');
      return unreachable(settings?.integrator_name);
    }
    let claims: oidc.IDToken | undefined;
    let idToken: string | undefined;
    try {
      const current = new URL(req.url, placeOf(req).origin);
      const tokens = await oidc.authorizationCodeGrant(configuration, current, { pkceCodeVerifier: taken.signIn.code_verifier, expectedState: state, expectedNonce: taken.signIn.nonce, idTokenExpected: true });
      claims = tokens.claims();
      idToken = tokens.id_token;
    } catch (err) {
      return grantFailure(err, client, settings);
    }
    if (!claims) return failure(401, 'The sign-in could not be checked', `The sign-in service sent no identity. ${startAgain}`);

    const claimed = claimedSites(claims[client.site_claim]);
    if (claimed.length === 0) {
      log.info({ integrator_id: client.integrator_id, claim: client.site_claim }, 'standalone sign-in without a site claim');
      return failure(403, 'No home is linked to your account', 'Your account does not name a home this portal can show. Ask your installer or the app’s support to link your home to your account.');
    }
    let checks: SiteCheck[];
    try {
      checks = await Promise.all(claimed.map((siteId) => checkSite(client.integrator_id, siteId)));
    } catch (err) {
      log.warn({ err, integrator_id: client.integrator_id }, 'the sites of a standalone sign-in could not be checked');
      return failure(503, 'The portal is busy', 'Your home could not be looked up just now. Try again in a moment.');
    }
    const sites = claimed.filter((_, i) => checks[i] === 'ok');
    if (sites.length === 0) {
      if (checks.includes('not_commissioned')) return failure(403, 'Your home is not set up yet', 'The devices of your home are not connected to the service yet. Once your installer or app has set them up, sign in again.');
      return failure(403, 'Your home is not known here', 'Your account names a home this portal does not know. Ask the app’s support to check the home linked to your account.');
    }
    return { integrator_id: client.integrator_id, host: placeOf(req).hostname, subject: String(claims.sub), site_ids: sites, id_token: idToken ?? null };
  }

  /** The token exchange or the ID token failed: the provider down, the code refused (used, expired), or the ID token not valid. */
  function grantFailure(err: unknown, client: OidcClientSettings, settings: PortalSettings | undefined): Failure {
    const startAgain = 'Start again to sign in.';
    if (err instanceof oidc.ResponseBodyError) {
      log.info({ integrator_id: client.integrator_id, error: err.error }, 'the provider refused the authorization code');
      return failure(401, 'This sign-in cannot be finished', `The sign-in service refused it (it may have been used already, or taken too long). ${startAgain}`);
    }
    if (err instanceof oidc.AuthorizationResponseError) return failure(401, 'The sign-in did not complete', `The sign-in service answered with an error. ${startAgain}`);
    const code = (err as { code?: unknown }).code;
    if (err instanceof ProviderUnavailableError || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError' || (err.cause instanceof Error && /fetch failed|ECONNREFUSED|ETIMEDOUT/.test(err.cause.message)) || /fetch failed/.test(err.message)))) {
      log.warn({ err, integrator_id: client.integrator_id }, 'the OpenID provider could not be reached');
      return unreachable(settings?.integrator_name);
    }
    // Everything else is an answer that did not check out: a bad signature, issuer, audience,
    // expiry or nonce. Logged with its code, never shown.
    log.warn({ err, code, integrator_id: client.integrator_id }, 'a standalone sign-in answer failed its checks');
    return failure(401, 'The sign-in could not be checked', `The answer of the sign-in service did not pass its checks. ${startAgain}`);
  }

  /** A site of the claim, as commissioning sees it for the integrator: its, with devices. */
  async function checkSite(integratorId: string, siteId: string): Promise<SiteCheck> {
    const principal: Principal = { kind: 'PORTAL_SESSION', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null };
    const opts = { timeoutMs: deps.timeoutMs, ...requestKey(principal, siteId) };
    try {
      await call(deps.transport, CommissioningOperations.getSite, { principal, params: { siteId } }, opts);
      const devices = await call(deps.transport, CommissioningOperations.listDevices, { principal, params: { siteId }, query: {} }, opts);
      return devices.length > 0 ? 'ok' : 'not_commissioned';
    } catch (err) {
      if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN' || err.code === 'VALIDATION_ERROR')) return 'unknown';
      throw err;
    }
  }
}

/** The claim's site ids: a string, or an array of them (others left out), without duplicates, at most MAX_CLAIMED_SITES. */
export function claimedSites(claim: unknown): string[] {
  const values = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : [];
  const ids = values.filter((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= 255 && [...v].every((c) => c >= ' ' && c !== '\u007f'));
  return [...new Set(ids)].slice(0, MAX_CLAIMED_SITES);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
