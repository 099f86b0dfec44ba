import type { Logger } from '@efs/logging';
import { instanceId, type Service, type ServiceDeps } from '@efs/runtime';
import { Authenticator } from './auth/authenticate.ts';
import { CredentialSync } from './auth/credentialSync.ts';
import { KeyEncryption, type Knex } from '@efs/db';
import { KnexSessionTokenStore } from './auth/sessionTokens.ts';
import { SignedTokens, type Keyring } from './auth/signedTokens.ts';
import { KnexKeyring, StaticKeyring } from './auth/signingKeys.ts';
import type { GatewayConfig } from './config.ts';
import { LATE_ANSWER_WAIT_MS } from './forward.ts';
import { KnexIdempotencyKeys } from './idempotency/idempotencyKeys.ts';
import { InFlightLimit } from './limits/inFlightLimit.ts';
import { FixedWindowRateLimiter } from './limits/rateLimiter.ts';
import { createListeners, listenerAddress, type ListenerName } from './listeners.ts';
import { DEFAULT_PORTAL_DIST, PortalAssets } from './portal/portalAssets.ts';
import { KnexPortalSettingsStore } from './portal/portalSettingsStore.ts';
import { OidcClients } from './portal/oidcClients.ts';
import { KnexPortalOidcStore } from './portal/oidcSettingsStore.ts';
import { KnexPortalLoginStore } from './portal/portalLoginStore.ts';
import { allRoutes } from './routes/index.ts';
import type { RouteDef } from './routes/route.ts';
import { DeviceDirectorySync } from './telemetry/deviceDirectory.ts';
import { KnexOpenAdrClientStore } from './openadr/clientStore.ts';

export const AUTH_SCHEMA = 'auth';
import { SANDBOX_INTEGRATOR_ID } from '@efs/contracts';
export { SANDBOX_INTEGRATOR_ID, SANDBOX_UTILITY_ID } from '@efs/contracts';

export interface GatewayService extends Service {
  /** Addresses of the listeners once started. */
  urls(): Record<ListenerName, string>;
  /** Resolves once every credential change written so far is published (tests, CLI). */
  flushCredentials(): Promise<void>;
}

export interface GatewayOptions {
  /** The routes to serve; all of them unless a test narrows it. */
  routes?: readonly RouteDef[];
}

/** Signing keys from the environment when given, else from the auth schema (rotated with `efs signing-key rotate`). */
function keyringOf(config: GatewayConfig, knex: Knex, logger: Logger, encryption: KeyEncryption): Keyring & { start?(): Promise<void>; stop?(): void } {
  if (config.SITE_TOKEN_SIGNING_KEYS) return StaticKeyring.parse(config.SITE_TOKEN_SIGNING_KEYS);
  return new KnexKeyring({ knex, schema: AUTH_SCHEMA, refreshMs: config.SIGNING_KEYS_REFRESH_MS, logger, encryption });
}

/**
 * Composition root of the gateway: credentials (memory, kept current from efs.auth.credentials),
 * signed site tokens and portal sessions, and the three listeners (see listeners.ts) whose routes
 * are forwarded over messaging.
 */
export async function createGatewayService(deps: ServiceDeps<GatewayConfig>, options: GatewayOptions = {}): Promise<GatewayService> {
  const { config, transport } = deps;
  const knex = deps.db.knex;
  const logger = deps.logger.child({ service: 'gateway' });
  const replicaId = config.GATEWAY_INSTANCE_ID ?? instanceId();

  const credentials = new CredentialSync({ knex, schema: AUTH_SCHEMA, transport, logger, replicaId, reloadMs: config.CREDENTIALS_RELOAD_MS });
  // The key-encryption key seals the signing keys and the answers kept for Idempotency-Key replay.
  // The configuration requires it (config.ts).
  const encryption = KeyEncryption.parse(config.SIGNING_KEY_ENCRYPTION_KEY ?? '');
  const keyring = keyringOf(config, knex, logger, encryption);
  const signed = new SignedTokens(keyring, { site: config.SITE_TOKEN_TTL_S, portalSession: config.PORTAL_SESSION_TTL_S });
  const sessions = new KnexSessionTokenStore(knex, AUTH_SCHEMA);
  const devices = new DeviceDirectorySync({ knex, schema: AUTH_SCHEMA, transport, replicaId });
  const idempotencyKeys = new KnexIdempotencyKeys({
    knex,
    schema: AUTH_SCHEMA,
    ttlSeconds: config.IDEMPOTENCY_KEY_TTL_S,
    // A claim outlives its request's whole wait (deadline, grace and the late answer) before another may take it over.
    lockSeconds: Math.ceil((config.REQUEST_TIMEOUT_MS + config.REQUEST_REPLY_GRACE_MS + LATE_ANSWER_WAIT_MS) / 1000) + 10,
    encryption,
  });
  const openAdrClients = new KnexOpenAdrClientStore(knex, AUTH_SCHEMA);
  const portalLogins = new KnexPortalLoginStore(knex, AUTH_SCHEMA, encryption);
  const portalOidc = new KnexPortalOidcStore(knex, AUTH_SCHEMA, encryption);
  let portalAddress = '';

  const readiness = [
    { name: 'messaging', check: () => transport.isReady() },
    { name: 'database', check: async () => (await knex.raw('select 1'), true) },
  ];
  const listeners = await createListeners({
    config,
    logger,
    readiness,
    routes: options.routes ?? allRoutes,
    routeDeps: {
      transport,
      timeoutMs: config.REQUEST_TIMEOUT_MS,
      graceMs: config.REQUEST_REPLY_GRACE_MS,
      validateReplies: config.VALIDATE_REPLIES,
      signed,
      sessions,
      directory: devices.directory,
      siteTokenTtlSeconds: config.SITE_TOKEN_TTL_S,
      telemetryRetentionDays: config.TELEMETRY_RETENTION_DAYS,
      sessionTtlSeconds: config.SESSION_TOKEN_TTL_S,
      portalUrl: () => config.PORTAL_URL ?? portalAddress,
    },
    authenticator: new Authenticator(credentials.cache, signed),
    limiter: new FixedWindowRateLimiter({ windowSeconds: config.RATE_LIMIT_WINDOW_S, replicas: config.GATEWAY_REPLICAS }),
    inFlight: new InFlightLimit(config.GATEWAY_MAX_IN_FLIGHT),
    idempotencyKeys,
    openadr: { clients: openAdrClients, tokenTtlSeconds: config.OPENADR_TOKEN_TTL_S },
    portal: {
      sessions,
      settings: new KnexPortalSettingsStore(knex, AUTH_SCHEMA),
      signed,
      credentials: credentials.cache,
      ttlSeconds: config.PORTAL_SESSION_TTL_S,
      sandboxIntegratorId: SANDBOX_INTEGRATOR_ID,
      sandboxFrameAncestors: config.SANDBOX_PORTAL_FRAME_ANCESTORS,
      assets: PortalAssets.load(config.PORTAL_DIST_DIR ?? DEFAULT_PORTAL_DIST),
      standalone: {
        clients: new OidcClients(portalOidc, config.PORTAL_OIDC_CACHE_MS),
        logins: portalLogins,
        loginTtlSeconds: config.PORTAL_LOGIN_TTL_S,
      },
      logger,
    },
  });
  const all = () => Object.values(listeners);

  const purge = setInterval(() => {
    void sessions.purge().catch((err: Error) => logger.warn({ err }, 'session token purge failed'));
    void idempotencyKeys.purge().catch((err: Error) => logger.warn({ err }, 'idempotency key purge failed'));
    void openAdrClients.purge().catch((err: Error) => logger.warn({ err }, 'OpenADR token purge failed'));
    void portalLogins.purge().catch((err: Error) => logger.warn({ err }, 'standalone portal login purge failed'));
  }, 10 * 60_000);
  purge.unref();

  return {
    name: 'gateway',
    readiness,
    async start() {
      await keyring.start?.();
      const resealed = await portalOidc.resealSecrets();
      if (resealed.length > 0) logger.info({ integrators: resealed }, 'standalone portal client secrets sealed with the current key-encryption key');
      await credentials.registerSandbox({ clientToken: config.SANDBOX_CLIENT_TOKEN, utilityApiKey: config.SANDBOX_UTILITY_API_KEY });
      await credentials.start();
      await devices.start();
      await listeners.public.listen({ port: config.PORT, host: config.HOST });
      await listeners.utility.listen({ port: config.UTILITY_PORT, host: config.HOST });
      await listeners.portal.listen({ port: config.PORTAL_PORT, host: config.HOST });
      portalAddress = listenerAddress(listeners.portal);
      logger.info({ credentials: credentials.cache.size, replica: replicaId }, 'gateway listening');
    },
    async stop() {
      // close() stops accepting connections and waits for the requests in flight to be answered
      // (a service's answer comes within REQUEST_TIMEOUT_MS); connections still open after that are cut.
      const force = setTimeout(() => all().forEach((s) => s.server.closeAllConnections()), config.REQUEST_TIMEOUT_MS + 2000);
      await Promise.all(all().map((s) => s.close()));
      clearTimeout(force);
      clearInterval(purge);
      keyring.stop?.();
      await credentials.stop();
    },
    urls: () => ({ public: listenerAddress(listeners.public), utility: listenerAddress(listeners.utility), portal: listenerAddress(listeners.portal) }),
    flushCredentials: () => credentials.flush(),
  };
}
