/**
 * Gateway test harness: the real gateway (auth schema on a fresh Postgres database, in-process
 * transport, real sockets) in front of stub services that answer the commissioning operations the
 * gateway relies on (getSite, ensureSite) like commissioning does, and echo every other
 * operation with the principal they received. Several gateways can share one database and one
 * transport, as replicas share Postgres and Kafka.
 */
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { z } from 'zod';
import { CommissioningOperations, type SiteRecordType } from '@efs/api';
import { defineOperations, RequestTopics, type OperationDef, type Principal, type RequestMessage, type RequestTarget } from '@efs/contracts';
import { CredentialsTopic } from '@efs/contracts';
import { migrateSchema, openDatabase, Outbox, type Database } from '@efs/db';
import { errorReply } from '@efs/messaging';
import { Errors } from '@efs/errors';
import { createLogger, type Logger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { apiClient, createTestDatabase, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, type ApiClient, type ApiResponse, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { parseGatewayConfig } from '../src/config.ts';
import { KnexCredentialStore } from '../src/auth/credentialStore.ts';
import { SignedTokens } from '../src/auth/signedTokens.ts';
import { StaticKeyring } from '../src/auth/signingKeys.ts';
import { authRoutes } from '../src/routes/auth.ts';
import type { RouteDef } from '../src/routes/route.ts';
import { AUTH_SCHEMA, createGatewayService, type GatewayService } from '../src/service.ts';

export { SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY };
export const SANDBOX_INTEGRATOR = 'sandbox-integrator';

/** Sites per integrator, as the stub commissioning knows them. */
export type SiteBook = Map<string, Set<string>>;

export interface StubCall {
  target: RequestTarget;
  request: RequestMessage;
}

export interface Stubs {
  sites: SiteBook;
  calls: StubCall[];
  /** Resolves the next time the operation arrives. */
  arrived(op: OperationDef): Promise<void>;
}

/**
 * Serves every request target on the transport. getSite and ensureSite follow the contract of
 * commissioning (404 for an unknown or another integrator's site); `slow` answers after `slowMs`;
 * any other operation echoes what it received.
 */
export async function installStubServices(transport: InProcessTransport, opts: { slowMs?: number } = {}): Promise<Stubs> {
  const sites: SiteBook = new Map();
  const calls: StubCall[] = [];
  const waiters = new Map<string, (() => void)[]>();
  for (const target of Object.keys(RequestTopics) as RequestTarget[]) {
    await transport.serve(target, async (request) => {
      calls.push({ target, request });
      for (const w of waiters.get(request.op) ?? []) w();
      waiters.delete(request.op);
      const integrator = request.principal.integrator_id ?? '';
      const own = sites.get(integrator) ?? new Set<string>();
      switch (request.op) {
        case CommissioningOperations.getSite.name: {
          const id = request.params.siteId ?? '';
          if (!own.has(id)) return errorReply(Errors.NOT_FOUND(`Site ${id} not found`));
          return { status: 200, body: JSON.stringify(siteRecord(id)) };
        }
        case CommissioningOperations.ensureSite.name: {
          const body = JSON.parse(request.body ?? '{}') as { site: { id: string } };
          if (body.site.id.startsWith('conflict')) return errorReply(Errors.CONFLICT(`Device ids already used by another site`));
          const created = !own.has(body.site.id);
          own.add(body.site.id);
          sites.set(integrator, own);
          return { status: 200, body: JSON.stringify({ created, site: siteRecord(body.site.id), devices: [] }) };
        }
        case ProbeOperations.slow.name:
          await new Promise((r) => setTimeout(r, opts.slowMs ?? 1000));
          return { status: 200, body: JSON.stringify({ slow: true }) };
        default:
          return { status: 200, body: JSON.stringify({ stub: true, target, op: request.op, principal: request.principal, params: request.params, query: request.query, body: request.body }) };
      }
    });
  }
  return {
    sites,
    calls,
    arrived: (op) => new Promise<void>((resolve) => waiters.set(op.name, [...(waiters.get(op.name) ?? []), resolve])),
  };
}

/** A logger whose lines are kept in memory, to check what reaches the logs. */
export function capturingLogger(level = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  return { logger: createLogger({ name: 'gateway-test', level, destination }), lines };
}

export interface GatewayHarness {
  gateway: GatewayService;
  db: Database;
  transport: InProcessTransport;
  urls: ReturnType<GatewayService['urls']>;
  /** Public API as the sandbox integrator. */
  api: ApiClient;
  utility: ApiClient;
  portal: ApiClient;
  /** Writes credentials as the CLI does (row + outbox); publish with gateway.flushCredentials(). */
  store: KnexCredentialStore;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  routes?: readonly RouteDef[];
  /** Share another harness's database (replicas); a new one is made otherwise. */
  database?: TestDatabase;
  transport?: InProcessTransport;
  logger?: Logger;
}

/** Signing keys the tests know, so they can make expired or foreign tokens themselves. */
export const TEST_SIGNING_KEYS = 'test1:test-signing-secret-0000000000000000000000,test0:older-signing-secret-000000000000000000000000';

export async function createTestDb(): Promise<TestDatabase> {
  return createTestDatabase('efs_gw');
}

export async function startGateway(opts: HarnessOptions & { database: TestDatabase; transport: InProcessTransport }): Promise<GatewayHarness> {
  const logger = opts.logger ?? createLogger({ name: 'gateway-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const db = await openDatabase({ url: opts.database.url, dataDir: '.data/unused', logger, poolMax: 4 });
  await migrateSchema(db.knex, AUTH_SCHEMA, migrations);
  const config = parseGatewayConfig({
    PORT: '0',
    UTILITY_PORT: '0',
    PORTAL_PORT: '0',
    SANDBOX_CLIENT_TOKEN,
    SANDBOX_UTILITY_API_KEY,
    SITE_TOKEN_SIGNING_KEYS: TEST_SIGNING_KEYS,
    SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
    ...opts.env,
  });
  const gateway = await createGatewayService({ logger, transport: opts.transport, db, config }, opts.routes ? { routes: opts.routes } : {});
  await gateway.start();
  const urls = gateway.urls();
  const store = new KnexCredentialStore(db.knex, AUTH_SCHEMA, new Outbox({ knex: db.knex, schema: AUTH_SCHEMA, publisher: opts.transport, logger, topics: [CredentialsTopic] }));
  return {
    gateway,
    db,
    transport: opts.transport,
    store,
    urls,
    api: apiClient(urls.public, SANDBOX_CLIENT_TOKEN),
    utility: apiClient(urls.utility, SANDBOX_UTILITY_API_KEY),
    portal: apiClient(urls.portal),
    async stop() {
      await gateway.stop();
      await db.close();
    },
  };
}

/** What gateways under test stand on: a database and a started in-process transport with stub services behind it. */
export interface StubbedBackend {
  database: TestDatabase;
  transport: InProcessTransport;
  stubs: Stubs;
  /** Stops the transport; drops the database unless it was given. */
  stop(): Promise<void>;
}

export interface BackendOptions {
  database?: TestDatabase;
  transport?: InProcessTransport;
  slowMs?: number;
  /** Sites the stub commissioning knows for the sandbox integrator. */
  sandboxSites?: readonly string[];
}

export async function startStubbedBackend(opts: BackendOptions = {}): Promise<StubbedBackend> {
  const database = opts.database ?? (await createTestDb());
  const transport = opts.transport ?? new InProcessTransport({ logger: createLogger({ name: 'transport', level: 'silent' }) });
  await transport.start();
  const stubs = await installStubServices(transport, opts.slowMs !== undefined ? { slowMs: opts.slowMs } : {});
  if (opts.sandboxSites) stubs.sites.set(SANDBOX_INTEGRATOR, new Set(opts.sandboxSites));
  return {
    database,
    transport,
    stubs,
    async stop() {
      await transport.stop();
      if (!opts.database) await database.drop();
    },
  };
}

/** One gateway with its own stubbed backend. */
export type StubbedGateway = GatewayHarness & { stubs: Stubs; database: TestDatabase };

export async function startGatewayWithStubs(opts: HarnessOptions & BackendOptions = {}): Promise<StubbedGateway> {
  const backend = await startStubbedBackend(opts);
  const h = await startGateway({ ...opts, database: backend.database, transport: backend.transport });
  return {
    ...h,
    stubs: backend.stubs,
    database: backend.database,
    async stop() {
      await h.stop();
      await backend.stop();
    },
  };
}

/**
 * Redeems a session token as the portal page does (`POST {portal}/auth/session_token` with the
 * token of its address) and answers the response; `session` is the `efs_ps_` portal session.
 */
export async function redeemPortalSession(portalBase: string, token: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${new URL(portalBase).origin}/auth/session_token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  return { status: r.status, body: await r.json() };
}

/** The token of a `portal_url`. */
export const tokenOfPortalUrl = (portalUrl: string): string => new URL(portalUrl).searchParams.get('token') ?? '';

/** The principal an echoing stub received. */
export const echoedPrincipal = (body: { principal?: Principal }) => body.principal;

/** The claims of a site token or portal session (its signed payload). */
export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.slice(7, token.lastIndexOf('.')), 'base64url').toString()) as { integrator_id: string; site_id: string; exp: number; kid: string; jti: string };

/** Signs site tokens and portal sessions with the test keys, e.g. already expired ones. */
/** The gateway's default lifetimes: site tokens and portal sessions live an hour. */
export const HOUR_LIFETIMES = { site: 3600, portalSession: 3600 };

export const testSigner = () => new SignedTokens(StaticKeyring.parse(TEST_SIGNING_KEYS), HOUR_LIFETIMES);

/** A site as commissioning answers it, with nothing known but its id. */
export function siteRecord(id: string): SiteRecordType {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id, first_name: null, last_name: null, company_name: null, email: null, state_code: null, city: null, zip_code: null,
    street_address: null, street_address2: null, service_account_id: null, created_at: at, updated_at: at,
  };
}

/** What the echoing stubs answer: the request as the service received it. */
const Echo = z.object({ stub: z.literal(true), target: z.string(), op: z.string(), principal: z.unknown(), params: z.unknown(), query: z.unknown(), body: z.unknown() });
const ProbeBody = z.object({ name: z.string().min(1), count: z.number().int().optional() });

/** Operations only the stubs answer, for gateway-mechanics tests. */
export const ProbeOperations = {
  ...defineOperations('commissioning', { siteProbe: { params: z.object({ siteId: z.string() }), response: Echo, errors: [] } }),
  ...defineOperations('catalog', {
    probe: { body: ProbeBody, response: Echo, errors: [] },
    probeWithoutBody: { response: Echo, errors: [] },
    slow: { response: z.object({ slow: z.literal(true) }), errors: [] },
  }),
};

/**
 * Small routes for gateway-mechanics tests, answered by the echoing stubs: a site route, a
 * client route with a JSON body on each API listener, a slow one, plus the token routes.
 */
export function probeRoutes(): RouteDef[] {
  const base = { summary: 'Probe', tags: ['Probe'] };
  return [
    ...authRoutes,
    { ...base, method: 'GET', url: '/v1/site/:siteId/probe', listener: 'public', portal: true, auth: { accepts: ['site', 'portalSession'] }, operation: ProbeOperations.siteProbe },
    { ...base, method: 'POST', url: '/v1/probe', listener: 'public', auth: { accepts: ['client'] }, operation: ProbeOperations.probe },
    { ...base, method: 'POST', url: '/v1/probe', listener: 'utility', auth: { accepts: ['utility'] }, operation: ProbeOperations.probe },
    { ...base, method: 'GET', url: '/v1/probe', listener: 'utility', auth: { accepts: ['utility'] }, operation: ProbeOperations.probeWithoutBody },
    { ...base, method: 'GET', url: '/v1/slow', listener: 'public', auth: { accepts: ['client'] }, operation: ProbeOperations.slow },
  ];
}

/** The body of every error answer, exactly. */
export function expectErrorBody(r: ApiResponse, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'detail', 'errors', 'message', 'status_code']);
  expect(r.body).toMatchObject({ code, status_code: status });
  expect(typeof r.body.message).toBe('string');
  expect(Array.isArray(r.body.detail) && Array.isArray(r.body.errors)).toBe(true);
}

export async function raw(url: string, method: string, init: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<ApiResponse> {
  const r = await fetch(url, { method, headers: init.headers ?? {}, ...(init.body !== undefined ? { body: init.body } : {}) });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: r.status, headers: r.headers, body };
}
