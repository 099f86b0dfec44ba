import type { ContextConfigDefault, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault, RouteGenericInterface, RouteHandlerMethod } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { ErrorBodySchema } from '@efs/api';
import type { OperationDef } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { Transport } from '@efs/messaging';
import type { AuthRule } from '../auth/authenticate.ts';
import type { KnexSessionTokenStore } from '../auth/sessionTokens.ts';
import type { SignedTokens } from '../auth/signedTokens.ts';
import type { DeviceDirectory } from '../telemetry/deviceDirectory.ts';
import { IdempotencyHeaders } from '../plugins/idempotency.ts';
import { securityOf } from '../plugins/openApi.ts';

export type Listener = 'public' | 'utility';

/**
 * What a route's handler may use, built once by the composition root: forwarding's transport and
 * deadlines, and what the routes the gateway answers itself need (a handler takes the few it uses).
 */
export interface RouteDeps {
  transport: Transport;
  /** A request's deadline at its service (REQUEST_TIMEOUT_MS). */
  timeoutMs: number;
  /** How much longer the answer of work committed just before the deadline is awaited (REQUEST_REPLY_GRACE_MS). */
  graceMs: number;
  /** Check each forwarded reply against the route's declared responses (VALIDATE_REPLIES). */
  validateReplies: boolean;
  signed: SignedTokens;
  sessions: KnexSessionTokenStore;
  /** Each integrator's devices and their sites, kept in memory. */
  directory: DeviceDirectory;
  /** TELEMETRY_RETENTION_DAYS: readings starting earlier than its start are refused. */
  telemetryRetentionDays: number | undefined;
  /** SITE_TOKEN_TTL_S. */
  siteTokenTtlSeconds: number;
  /** SESSION_TOKEN_TTL_S. */
  sessionTtlSeconds: number;
  /** Where the portal answers: PORTAL_URL, else the portal listener's address once it listens. */
  portalUrl(): string;
}

/** The Fastify handler of a route, its request typed by the route's schemas. */
export type RouteHandler<R extends SchemaSource = RouteDef> = RouteHandlerMethod<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGenericInterface, ContextConfigDefault, RouteSchema<R>, ZodTypeProvider>;

/**
 * One HTTP route of the gateway: where it listens, who may call it, and the catalogue operation
 * it is forwarded to, whose schemas validate it and document it in OpenAPI. A route the gateway
 * answers itself (`localRoute`: tokens, portal sessions, telemetry ingest and reads) carries its
 * handler, still names the operation its handler asks first, and says where its own HTTP shape
 * differs (`schema`).
 */
export interface RouteDef {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly listener: Listener;
  /**
   * Served on the portal listener too, to portal sessions only: the portal page calls the site's
   * API on its own origin. Only a public route that accepts portal sessions can say so.
   */
  readonly portal?: true;
  readonly auth: AuthRule;
  readonly operation: OperationDef;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly schema?: { readonly body?: z.ZodType; readonly response?: z.ZodType };
  /** The gateway answers the route itself: its handler, made once per listener serving it. Without one, the route is forwarded to its operation. */
  readonly handler?: (deps: RouteDeps) => RouteHandler;
}

/**
 * Who a route serves, which decides where it listens and which credentials it takes; a route
 * spreads one (`...Audience.endUser`) unless it takes an unusual mix.
 */
export const Audience = {
  /** The integrator's backend: client token, public listener. */
  integrator: { listener: 'public', auth: { accepts: ['client'] } },
  /** The end user of one site, in the mobile app (site token) or the portal (portal session, on the portal listener too). */
  endUser: { listener: 'public', portal: true, auth: { accepts: ['site', 'portalSession'] } },
  /** A utility's systems: API key, utility listener. */
  utility: { listener: 'utility', auth: { accepts: ['utility'] } },
} as const satisfies Record<string, Pick<RouteDef, 'listener' | 'portal' | 'auth'>>;

export const defineRoutes = (routes: RouteDef[]): RouteDef[] => routes;

/**
 * A route the gateway answers itself: `handler` makes its handler, whose request is typed by the
 * route's schemas, from the route deps.
 */
export function localRoute<const R extends Omit<RouteDef, 'handler'>>(route: R, handler: (deps: RouteDeps) => RouteHandler<R>): R & Pick<RouteDef, 'handler'> {
  // Fastify calls it only with requests that R's own schemas validated (routeOptions(R)).
  return { ...route, handler: handler as unknown as RouteDef['handler'] };
}

/**
 * What can answer any route whatever its operation: every route authenticates (401, 403), is
 * rate limited (429) and waits for a service that may not answer in time (503).
 */
const ALWAYS = [401, 403, 429, 503];

/** What a POST or PATCH can answer besides: 409 for an Idempotency-Key used with another body, or still in flight. */
const WRITES = new Set<RouteDef['method']>(['POST', 'PATCH']);

/** What a route's schemas come from: its operation's, and its own where they differ. */
type SchemaSource = Pick<RouteDef, 'operation' | 'schema'>;

type SchemaOf<O, K extends 'params' | 'query' | 'body'> = K extends keyof O ? Exclude<O[K], undefined> : undefined;

/**
 * A route's schemas, typed by its operation (undefined where it has none): Fastify's zod type
 * provider types `req.params`, `req.query` and `req.body` from them.
 */
export interface RouteSchema<R extends SchemaSource = RouteDef> {
  params: SchemaOf<R['operation'], 'params'>;
  querystring: SchemaOf<R['operation'], 'query'>;
  body: R['schema'] extends { readonly body: infer B extends z.ZodType } ? B : SchemaOf<R['operation'], 'body'>;
  response: Record<number, z.ZodType>;
  /** Every POST and PATCH takes an Idempotency-Key. */
  headers?: z.ZodType;
}

interface DerivedSchema {
  headers?: z.ZodType;
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  response: Record<number, z.ZodType>;
}

const schemas = new WeakMap<RouteDef, DerivedSchema>();

/** The schemas of a route: its operation's (or its own), and an error body for every status it can answer. */
export function routeSchema<R extends RouteDef>(route: R): RouteSchema<R> {
  let s = schemas.get(route);
  if (!s) schemas.set(route, (s = deriveSchema(route)));
  // The memo forgets which route it was derived from; these are that route's schemas.
  return s as RouteSchema<R>;
}

function deriveSchema(route: RouteDef): DerivedSchema {
  const op = route.operation;
  const body = route.schema?.body ?? op.body;
  const takesInput = op.params !== undefined || op.query !== undefined || body !== undefined;
  const writes = WRITES.has(route.method);
  const statuses = new Set([...ALWAYS, ...(takesInput || writes ? [Errors.VALIDATION_ERROR.status] : []), ...(writes ? [Errors.CONFLICT.status] : []), ...op.errors.map((code) => Errors[code].status)]);
  return {
    ...(writes ? { headers: IdempotencyHeaders } : {}),
    ...(op.params ? { params: op.params } : {}),
    ...(op.query ? { querystring: op.query } : {}),
    ...(body ? { body } : {}),
    response: { 200: route.schema?.response ?? op.response, ...Object.fromEntries([...statuses].sort().map((s) => [s, ErrorBodySchema])) },
  };
}

/** A route as Fastify registers it: method, path, schemas (with what OpenAPI shows) and its auth rule. */
export function routeOptions<R extends RouteDef>(route: R) {
  return {
    method: route.method,
    url: route.url,
    schema: { ...routeSchema(route), summary: route.summary, tags: [...route.tags], security: securityOf(route) },
    config: { auth: route.auth },
  };
}
