import { z } from 'zod';
import { bool, optionalPositiveInt, optionalString, parseConfig, port, positiveInt } from '@efs/config';
import { KeyEncryption } from '@efs/db';
import { parseFrameOrigins } from './portal/framing.ts';

const GatewayEnv = z.object({
  HOST: z.string().default('127.0.0.1'),
  /** Public API (Cloud API and Mobile App API). */
  PORT: port(8080),
  UTILITY_PORT: port(8081),
  PORTAL_PORT: port(8082),
  /** Public address of the portal listener, used in the portal_url of sessions; defaults to the listener's own address. */
  PORTAL_URL: optionalString(),
  /**
   * A forwarded request's deadline: a service that gets it later drops it unhandled, and commits
   * nothing after it.
   */
  REQUEST_TIMEOUT_MS: positiveInt(5000),
  /**
   * How much longer than REQUEST_TIMEOUT_MS the gateway waits for the answer, so that the answer
   * of work committed just before the deadline arrives: a 503 then means nothing was done.
   */
  REQUEST_REPLY_GRACE_MS: positiveInt(1000),
  /**
   * Requests in flight over the three listeners; more answer 503 with Retry-After at once, before
   * any work. Roughly what the services complete within REQUEST_TIMEOUT_MS.
   */
  GATEWAY_MAX_IN_FLIGHT: positiveInt(256),
  /** How long an Idempotency-Key and its answer are kept (Stripe's 24 hours). */
  IDEMPOTENCY_KEY_TTL_S: positiveInt(24 * 3600),
  /** Milliseconds a client has to send a whole request (headers and body) before 408. */
  HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
  /** Readings that start before today's UTC day minus this many days are refused (telemetry-ingest no longer keeps them). Unset: none is too old. */
  TELEMETRY_RETENTION_DAYS: optionalPositiveInt(36_600),
  /** Registered at start as the sandbox integrator's client token when set. */
  SANDBOX_CLIENT_TOKEN: optionalString(),
  /** Registered at start as the sandbox utility's API key when set. */
  SANDBOX_UTILITY_API_KEY: optionalString(),
  /**
   * Origins allowed to frame the sandbox integrator's portal (space-separated, e.g.
   * `https://app.example.com http://localhost:3000`); unset: any origin (sandbox only; every other
   * integrator's come from `efs portal frame-ancestors`).
   */
  SANDBOX_PORTAL_FRAME_ANCESTORS: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()).transform((v, ctx) => {
    if (v === undefined) return undefined;
    const parsed = parseFrameOrigins(v.split(/\s+/).filter(Boolean));
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    }
    return parsed.origins;
  }),
  /** The built portal UI (`npm run build -w @efs/portal`); defaults to the repository's portal/dist. */
  PORTAL_DIST_DIR: optionalString(),
  /** Identifies this replica (its reply topic, its credentials consumer); defaults to host name plus random suffix. */
  GATEWAY_INSTANCE_ID: optionalString(),

  /**
   * Site-token and portal-session signing keys, `kid:secret` pairs separated by commas; the first
   * signs, all verify. Unset: keys live in the auth schema (`auth.signing_keys`), created at first
   * start and rotated with `efs signing-key rotate`.
   */
  SITE_TOKEN_SIGNING_KEYS: optionalString(),
  /**
   * Key-encryption key(s) that seal the signing keys kept in the auth schema and the answers kept
   * for Idempotency-Key replay (which carry site tokens, portal sessions and webhook secrets):
   * `id:base64key` (32 bytes; `openssl rand -base64 32`), comma-separated to rotate (the first
   * seals, all open). Always required: a database dump alone must hold no usable credential.
   */
  SIGNING_KEY_ENCRYPTION_KEY: optionalString(),
  /**
   * How often a replica re-reads the signing keys of the auth schema (one small query): the time
   * a key revoked with `efs signing-key revoke` may still verify on a replica.
   */
  SIGNING_KEYS_REFRESH_MS: positiveInt(5_000),
  SITE_TOKEN_TTL_S: positiveInt(3600),
  /** A session token from POST /v1/sessions must be redeemed within this time. */
  SESSION_TOKEN_TTL_S: positiveInt(600),
  /** Lifetime of the portal session a redeemed session token starts. */
  PORTAL_SESSION_TTL_S: positiveInt(3600),
  /** Lifetime of an OpenADR 3 access token (POST /openadr3/3.1/auth/token). */
  OPENADR_TOKEN_TTL_S: positiveInt(900, 86_400),
  /** Lifetime of a standalone portal login (its cookie): the user signs in again after it. */
  PORTAL_LOGIN_TTL_S: positiveInt(8 * 3600),
  /** How long a replica reuses an integrator's standalone portal settings (efs portal oidc set) before reading them again. */
  PORTAL_OIDC_CACHE_MS: positiveInt(5_000),
  /** Safety net: every replica re-reads all credentials this often (revocations travel on efs.auth.credentials within seconds). */
  CREDENTIALS_RELOAD_MS: positiveInt(300_000),

  /** Requests per token per RATE_LIMIT_WINDOW_S (decisions.md, Limits). */
  RATE_LIMIT_CLIENT: positiveInt(1200),
  RATE_LIMIT_SITE: positiveInt(120),
  RATE_LIMIT_SESSION: positiveInt(120),
  RATE_LIMIT_UTILITY: positiveInt(600),
  RATE_LIMIT_WINDOW_S: positiveInt(60),
  /**
   * Requests a minute from one client address to the portal's routes that take no credential
   * (the link check, its redemption, the branding style sheet): guessing at links is slowed down.
   */
  RATE_LIMIT_PORTAL_ADDRESS: positiveInt(300),
  /**
   * The proxies in front of the gateway trusted to name the client's address in X-Forwarded-For:
   * a hop count (`1` behind one ingress) or comma-separated addresses and CIDRs. Unset: the
   * connection's peer is the client (every client behind an ingress would share one address).
   */
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : /^\d+$/.test(v.trim()) ? Number(v.trim()) : v.split(',').map((x) => x.trim()).filter(Boolean))),
  /** Gateway replicas behind the load balancer: each enforces limit / GATEWAY_REPLICAS. */
  GATEWAY_REPLICAS: positiveInt(1),

  /**
   * Check every forwarded reply against the route's declared responses (status and schema) and
   * answer 500 when it breaks them, so the OpenAPI document cannot drift from what is served.
   * The test harnesses turn it on; it costs a parse of every reply.
   */
  VALIDATE_REPLIES: bool(false),
}).superRefine((c, ctx) => {
  if (c.SIGNING_KEY_ENCRYPTION_KEY === undefined) {
    ctx.addIssue({ code: 'custom', path: ['SIGNING_KEY_ENCRYPTION_KEY'], message: 'required to seal the signing keys and the answers kept for Idempotency-Key replay' });
    return;
  }
  try {
    KeyEncryption.parse(c.SIGNING_KEY_ENCRYPTION_KEY);
  } catch (err) {
    ctx.addIssue({ code: 'custom', path: ['SIGNING_KEY_ENCRYPTION_KEY'], message: (err as Error).message });
  }
});
export type GatewayConfig = z.infer<typeof GatewayEnv>;

export const parseGatewayConfig = (env: Record<string, string | undefined>): GatewayConfig => parseConfig(GatewayEnv, env);
