/**
 * Every endpoint of the specification's two endpoint tables, its legacy paths and the utility
 * endpoints decisions.md adds, checked against the routes the gateway registers, with the token
 * kinds the specification gives them. Endpoints that later issues build are listed, by area, in
 * EXPECTED_MISSING: the test documents the gap and fails if one of them appears without being
 * moved out of that list, or if any other endpoint is missing.
 */
import { describe, expect, it } from 'vitest';
import type { TokenKindName } from '../src/auth/authenticate.ts';
import { allRoutes } from '../src/routes/index.ts';
import type { Listener, RouteDef } from '../src/routes/route.ts';

interface Endpoint {
  method: RouteDef['method'];
  /** Path as the specification writes it, `{param}` style. */
  path: string;
  listener: Listener;
  /** Token kinds the route must accept (the specification's C / S column, decisions.md otherwise). */
  accepts: TokenKindName[];
  /** Kinds it may accept besides: a portal session wherever a site token works (the embedded portal is the end user's app). */
  mayAccept?: TokenKindName[];
}

const C: TokenKindName[] = ['client'];
const S: TokenKindName[] = ['site'];
const U: TokenKindName[] = ['utility'];
const pub = (method: Endpoint['method'], path: string, accepts: TokenKindName[]): Endpoint => ({ method, path, listener: 'public', accepts, mayAccept: accepts.includes('site') ? ['portalSession'] : [] });
const utl = (method: Endpoint['method'], path: string): Endpoint => ({ method, path, listener: 'utility', accepts: U });

/** The specification: "Operations with a described payload", "Other operations", legacy paths, aliases; decisions.md's utility API. */
export const SPEC_ENDPOINTS: Endpoint[] = [
  // Operations with a described payload
  pub('POST', '/v1/commission', C),
  pub('POST', '/v1/site/{siteId}/devices', ['client', 'site']),
  utl('POST', '/v1/events'),
  // Other operations
  pub('POST', '/v1/auth/site/{siteId}', C),
  pub('POST', '/v1/sessions', C),
  pub('GET', '/v1/sites', C),
  pub('GET', '/v1/programs', C),
  pub('GET', '/v1/commands', C),
  pub('PATCH', '/v1/command/{commandId}', C),
  pub('POST', '/v1/telemetry/BATTERY', C),
  pub('POST', '/v1/telemetry/BATTERY_COUNTER', C),
  pub('PATCH', '/v1/settings/{settingsRequestId}', C),
  pub('GET', '/v1/settings', C), // decisions.md: settings requests for clouds that poll
  pub('POST', '/v1/supplements', C),
  pub('GET', '/v1/site/{siteId}', S),
  pub('PATCH', '/v1/site/{siteId}', S),
  pub('GET', '/v1/site/{siteId}/devices', S),
  pub('GET', '/v1/site/{siteId}/device/{deviceId}', S),
  pub('PATCH', '/v1/site/{siteId}/device/{deviceId}', S),
  pub('DELETE', '/v1/site/{siteId}/device/{deviceId}', S),
  pub('POST', '/v1/site/{siteId}/enrollments', S),
  pub('GET', '/v1/site/{siteId}/enrollments', S),
  pub('DELETE', '/v1/site/{siteId}/enrollment/{enrollmentId}', S),
  pub('GET', '/v1/site/{siteId}/programs', S),
  pub('GET', '/v1/site/{siteId}/program/{programId}', S),
  pub('GET', '/v1/site/{siteId}/events', S),
  pub('GET', '/v1/site/{siteId}/event/{eventId}', S),
  pub('PATCH', '/v1/site/{siteId}/event/{eventId}', S),
  // Legacy paths of earlier revisions and the flow description's aliases
  pub('GET', '/v1/site/{siteId}/device/{deviceId}/dispatches', S),
  pub('GET', '/v1/site/{siteId}/dispatch/{dispatchId}', S),
  pub('PATCH', '/v1/site/{siteId}/dispatch/{dispatchId}', S),
  pub('POST', '/v1/telemetry', C),
  pub('DELETE', '/v1/site/{siteId}/enrollments/{enrollmentId}', S),
  pub('PATCH', '/v1/sites/{siteId}', S),
  // Webhook subscriptions (decisions.md), both audiences
  pub('POST', '/v1/webhooks', C),
  pub('GET', '/v1/webhooks', C),
  pub('DELETE', '/v1/webhooks/{webhookId}', C),
  pub('POST', '/v1/webhooks/{webhookId}/rotate-secret', C),
  utl('POST', '/v1/webhooks'),
  utl('GET', '/v1/webhooks'),
  utl('DELETE', '/v1/webhooks/{webhookId}'),
  utl('POST', '/v1/webhooks/{webhookId}/rotate-secret'),
  ...(['pub', 'utl'] as const).flatMap((at) => {
    const e = (method: Endpoint['method'], path: string) => (at === 'pub' ? pub(method, path, C) : utl(method, path));
    return [
      e('GET', '/v1/webhooks/{webhookId}'),
      e('PATCH', '/v1/webhooks/{webhookId}'),
      e('GET', '/v1/webhooks/{webhookId}/deliveries'),
      e('POST', '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/replay'),
      e('POST', '/v1/webhooks/{webhookId}/replay'),
      e('GET', '/v1/notifications'),
    ];
  }),
  // Utility API (decisions.md)
  utl('GET', '/v1/programs'),
  utl('POST', '/v1/programs'),
  utl('PATCH', '/v1/programs/{programId}'),
  utl('GET', '/v1/enrollments'),
  utl('GET', '/v1/enrollments/{enrollmentId}'),
  utl('PATCH', '/v1/enrollments/{enrollmentId}'),
  utl('GET', '/v1/programs/{programId}/groups'),
  utl('POST', '/v1/programs/{programId}/groups'),
  utl('PATCH', '/v1/programs/{programId}/groups/{groupId}'),
  utl('DELETE', '/v1/programs/{programId}/groups/{groupId}'),
  utl('GET', '/v1/events'),
  utl('GET', '/v1/events/{eventId}'),
  utl('GET', '/v1/events/{eventId}/sites'),
  utl('DELETE', '/v1/events/{eventId}'),
  utl('POST', '/v1/telemetry/latest'),
  utl('POST', '/v1/telemetry/historical'),
];

const key = (e: { method: string; listener: Listener; path: string }) => `${e.listener} ${e.method} ${e.path.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '{}')}`;

/** Endpoints of later issues, by area: none left. */
export const EXPECTED_MISSING: Record<string, string[]> = {};

describe('the specification’s endpoints and the registered routes', () => {
  const registered = new Map<string, RouteDef[]>();
  for (const r of allRoutes) registered.set(key({ method: r.method, listener: r.listener, path: r.url }), [...(registered.get(key({ method: r.method, listener: r.listener, path: r.url })) ?? []), r]);
  const missing = new Set(Object.values(EXPECTED_MISSING).flat());

  it('lists every expected-missing endpoint among the specification’s endpoints', () => {
    const spec = new Set(SPEC_ENDPOINTS.map(key));
    for (const m of missing) expect(spec.has(m), m).toBe(true);
  });

  it('registers every endpoint not left to a later issue, once, with the token kinds the specification gives it (a client-token endpoint rejects site tokens, a site endpoint client tokens)', () => {
    const problems: string[] = [];
    for (const e of SPEC_ENDPOINTS) {
      const k = key(e);
      const routes = registered.get(k) ?? [];
      if (missing.has(k)) {
        if (routes.length > 0) problems.push(`${k} is registered now: move it out of EXPECTED_MISSING`);
        continue;
      }
      if (routes.length !== 1) {
        problems.push(`${k} registered ${routes.length} times`);
        continue;
      }
      const accepts = routes[0]!.auth.accepts;
      const allowed = [...e.accepts, ...(e.mayAccept ?? [])];
      if (!e.accepts.every((a) => accepts.includes(a)) || !accepts.every((a) => allowed.includes(a))) {
        problems.push(`${k} accepts ${accepts.join(',')}; it must accept ${e.accepts.join(',')}${e.mayAccept?.length ? ` and may accept ${e.mayAccept.join(',')}` : ''}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('registers no route twice and every route under /v1', () => {
    for (const [k, routes] of registered) expect(routes.length, k).toBe(1);
    for (const r of allRoutes) expect(r.url.startsWith('/v1/'), r.url).toBe(true);
  });
});
