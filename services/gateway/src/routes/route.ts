import type { z } from 'zod';
import { ErrorBodySchema } from '@efs/api';
import type { OperationDef } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { AuthRule } from '../auth/authenticate.ts';
import { IdempotencyHeaders } from '../plugins/idempotency.ts';
import { securityOf } from '../plugins/openApi.ts';

export type Listener = 'public' | 'utility';

/**
 * One HTTP route of the gateway: where it listens, who may call it, and the catalogue operation
 * it is forwarded to, whose schemas validate it and document it in OpenAPI. A route the gateway
 * answers itself (token issuance) still asks its operation first, and says where its own HTTP
 * shape differs (`schema`).
 */
export interface RouteDef {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly listener: Listener;
  readonly auth: AuthRule;
  readonly operation: OperationDef;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly schema?: { readonly body?: z.ZodType; readonly response?: z.ZodType };
}

/**
 * Who a route serves, which decides where it listens and which credentials it takes; a route
 * spreads one (`...Audience.endUser`) unless it takes an unusual mix.
 */
export const Audience = {
  /** The integrator's backend: client token, public listener. */
  integrator: { listener: 'public', auth: { accepts: ['client'] } },
  /** The end user of one site, in the mobile app (site token) or the portal (portal session). */
  endUser: { listener: 'public', auth: { accepts: ['site', 'portalSession'] } },
  /** A utility's systems: API key, utility listener. */
  utility: { listener: 'utility', auth: { accepts: ['utility'] } },
} as const satisfies Record<string, Pick<RouteDef, 'listener' | 'auth'>>;

export const defineRoutes = (routes: RouteDef[]): RouteDef[] => routes;
/** One route, its schemas' types kept (a route the gateway answers itself reads them typed). */
export const defineRoute = <const R extends RouteDef>(route: R): R => route;

/**
 * What can answer any route whatever its operation: every route authenticates (401, 403), is
 * rate limited (429) and waits for a service that may not answer in time (503).
 */
const ALWAYS = [401, 403, 429, 503];

/** What a POST or PATCH can answer besides: 409 for an Idempotency-Key used with another body, or still in flight. */
const WRITES = new Set<RouteDef['method']>(['POST', 'PATCH']);

type SchemaOf<O, K extends 'params' | 'query' | 'body'> = K extends keyof O ? Exclude<O[K], undefined> : undefined;

/**
 * A route's schemas, typed by its operation (undefined where it has none): Fastify's zod type
 * provider types `req.params`, `req.query` and `req.body` from them.
 */
export interface RouteSchema<R extends RouteDef = RouteDef> {
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
