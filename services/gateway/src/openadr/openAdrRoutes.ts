import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CatalogOperations, DispatchOperations, type EventStatusType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { AppError, Errors } from '@efs/errors';
import { sendError } from '@efs/http';
import { call, type Transport } from '@efs/messaging';
import { bearerToken } from '../auth/authenticate.ts';
import type { KnexOpenAdrClientStore, OpenAdrGrant } from './clientStore.ts';
import { eventFromOpenAdr, eventToOpenAdr, type OpenAdrEvent } from './eventMapping.ts';
import { catalogProgramToOpenAdr, programFromOpenAdr, utilityProgramToOpenAdr, type OpenAdrProgram } from './programMapping.ts';
import { problem, problemBodies } from './problem.ts';
import { ROLE_SCOPES, scopesAllow, type OpenAdrRole, type OpenAdrScope } from './scopes.ts';
import type { FixedWindowRateLimiter } from '../limits/rateLimiter.ts';
import { admitRequest } from '../plugins/rateLimit.ts';
import { refusedRequests } from '../plugins/refusedRequests.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The OpenADR access token's grant, on the OpenADR routes that take one. */
    openadr?: OpenAdrGrant;
  }
  interface FastifyContextConfig {
    /** The scopes an OpenADR operation takes (any one of them), as the yaml's `security` says. */
    openadrScopes?: readonly OpenAdrScope[];
  }
}

/** Where the utility listener serves the OpenADR 3.1 VTN. */
export const OPENADR_PREFIX = '/openadr3/3.1';

export interface OpenAdrOptions {
  clients: KnexOpenAdrClientStore;
  /** The listener's per-token limiter: a client's requests count as its owner's token kind would (RATE_LIMIT_UTILITY for BL, RATE_LIMIT_CLIENT for VEN). */
  limiter: FixedWindowRateLimiter;
  limits: Record<OpenAdrRole, number>;
  transport: Transport;
  /** A forwarded request's deadline and grace (REQUEST_TIMEOUT_MS, REQUEST_REPLY_GRACE_MS). */
  timeoutMs: number;
  graceMs: number;
  /** OPENADR_TOKEN_TTL_S. */
  tokenTtlSeconds: number;
}

/** The yaml's `objectID`. */
const ObjectId = z.string().min(1).max(128).regex(/^[a-zA-Z0-9_-]*$/, 'not an objectID');
/** The yaml's `target`; `targets` repeats in the query. */
const Target = z.string().min(1).max(128);
const INT32_MAX = 2 ** 31 - 1;

/** `skip` and `limit` as the yaml bounds them (limit 0..50); no limit given answers the most, 50. */
const PagingQuery = z.object({
  skip: z.coerce.number().int().min(0).max(INT32_MAX).default(0),
  limit: z.coerce.number().int().min(0).max(50).default(50),
  targets: z.union([Target, z.array(Target)]).transform((v) => (Array.isArray(v) ? v : [v])).optional(),
});

/** The yaml's `intervalPeriod`: start (a dateTime, or "0001-01-01" for now), duration, randomizeStart. */
const IntervalPeriod = z.object({ start: z.string().min(1).max(64).optional(), duration: z.string().min(2).max(64).optional(), randomizeStart: z.string().min(2).max(64).optional() });

/** The yaml's `eventRequest`, its bounds only (what is carried out is eventMapping.ts's to decide). */
const EventRequest = z.object({
  programID: ObjectId,
  eventName: z.string().nullable().optional(),
  priority: z.number().int().min(0).nullable().optional(),
  duration: z.string().min(2).max(64).optional(),
  targets: z.array(Target).max(1000).nullable().optional(),
  reportDescriptors: z.array(z.unknown()).nullable().optional(),
  payloadDescriptors: z.array(z.object({ objectType: z.literal('EVENT_PAYLOAD_DESCRIPTOR'), payloadType: z.string().min(1).max(128) })).max(100).nullable().optional(),
  intervalPeriod: IntervalPeriod.optional(),
  intervals: z.array(z.object({ id: z.number().int(), intervalPeriod: IntervalPeriod.optional(), payloads: z.array(z.object({ type: z.string().min(1).max(128), values: z.array(z.unknown()).max(100) })).max(100) })).max(1000).optional(),
});

/** The yaml's `programRequest`, its bounds only (what is kept is programMapping.ts's to decide). */
const ProgramRequest = z.object({
  programName: z.string().min(1).max(128),
  intervalPeriod: IntervalPeriod.nullable().optional(),
  programDescriptions: z.array(z.object({ URL: z.string().min(2).max(8000) })).max(100).nullable().optional(),
  payloadDescriptors: z.array(z.unknown()).max(100).nullable().optional(),
  attributes: z.array(z.object({ type: z.string().min(1).max(128), values: z.array(z.unknown()).max(10_000) })).max(100).nullable().optional(),
  targets: z.array(Target).max(1000).nullable().optional(),
});

/** What `active` keeps: events that have not transpired. A canceled event is deleted in OpenADR terms: never shown. */
const SHOWN: EventStatusType[] = ['UPCOMING', 'IN_PROGRESS', 'COMPLETED'];
const ACTIVE: EventStatusType[] = ['UPCOMING', 'IN_PROGRESS'];

/** The catalog answers pages of at most this many programs (its Pagination). */
const CATALOG_PAGE_MAX = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who the catalog is asked as: a BL client as its utility, a VEN client as its integrator. */
function principalOf(grant: OpenAdrGrant): Principal {
  const c = grant.client;
  return c.role === 'BL'
    ? { kind: 'UTILITY', integrator_id: null, utility_id: c.utility_id, site_id: null, token_id: c.id }
    : { kind: 'CLIENT', integrator_id: c.integrator_id, utility_id: null, site_id: null, token_id: c.id };
}

function grantOf(req: FastifyRequest): OpenAdrGrant {
  if (!req.openadr) throw Errors.INTERNAL_ERROR(undefined, { cause: new Error(`${req.method} ${req.url} has no OpenADR scopes`) });
  return req.openadr;
}

/** A token request's refusal (RFC 6749 §5.2): the yaml's problem with the OAuth `error` code beside it. */
function tokenError(reply: FastifyReply, status: 400 | 401, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ ...problem(status, description), error, error_description: description });
}

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1: each part form-encoded), if the request carries them. */
function basicCredentials(req: FastifyRequest): { id: string; secret: string } | 'malformed' | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string' || !/^Basic\s/i.test(h)) return undefined;
  const decoded = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    const [id, secret] = [form(decoded.slice(0, colon)), form(decoded.slice(colon + 1))];
    // Text a database cannot hold (NUL, lone surrogates) is no client's credentials.
    if ([id, secret].some((s) => s.includes('\u0000') || !s.isWellFormed())) return 'malformed';
    return { id, secret };
  } catch {
    return 'malformed';
  }
}

/** A form body's fields, each a list (a field given twice is a malformed token request, RFC 6749 §3.2). */
type FormFields = Record<string, string[]>;

/**
 * The OpenADR 3.1 VTN face, under OPENADR_PREFIX on the utility listener (an encapsulated
 * plugin: its hooks, body parser and 404 stay on this prefix). Implemented so far: the token
 * endpoint, the auth server info, the program reads, event reads, SIMPLE event creation and event
 * deletion (BL clients); other operations of the yaml are not routed and answer 404 in the problem shape.
 */
export const openAdrRoutes: FastifyPluginAsyncZod<OpenAdrOptions> = async (app, opts) => {
  const { clients, transport } = opts;
  const callOpts = { timeoutMs: opts.timeoutMs, graceMs: opts.graceMs };

  app.addHook('onSend', problemBodies);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const fields = Object.create(null) as FormFields;
    for (const [k, v] of new URLSearchParams(body as string)) (fields[k] ??= []).push(v);
    done(null, fields);
  });

  // An operation's scopes, checked before its input: a caller without a valid token learns nothing.
  // Then the client's rate limit, as the listener's per-token limit (which runs before any route
  // hook, so before this face knows the client) would count it.
  const refused = refusedRequests('utility', 'rate_limit');
  app.addHook('onRequest', async (req, reply) => {
    const required = req.routeOptions.config.openadrScopes;
    if (!required) return;
    const token = bearerToken(req);
    if (!token) throw Errors.UNAUTHORIZED(req.headers.authorization === undefined ? 'Missing bearer token' : 'Malformed Authorization header; expected "Bearer <token>"');
    const grant = await clients.findToken(token);
    if (!grant) throw Errors.UNAUTHORIZED('Unknown, expired or revoked access token');
    if (!scopesAllow(grant.scopes, required)) throw Errors.FORBIDDEN(`This operation needs the scope ${required.join(' or ')}`);
    req.openadr = grant;
    if (!admitRequest(opts.limiter, `OPENADR:${grant.client.id}`, opts.limits[grant.client.role], reply, refused)) return reply;
  });

  // The yaml documents these operations: they stay out of the utility API's own OpenAPI document
  // (`schema.hide` on each route), which the fuzz tier reads.
  // Every route of the face does work, so the listener's load shedding counts it (`shed`).
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (r) => {
    r.config = { ...r.config, shed: true };
    routes.push({ method: String(r.method), url: r.url.slice(OPENADR_PREFIX.length) || '/' });
  });
  app.setNotFoundHandler((req, reply) => {
    const path = (req.url.split('?')[0] ?? '/').slice(OPENADR_PREFIX.length).replace(/\/$/, '');
    const allowed = routes.filter((r) => new RegExp(`^${r.url.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(path) && r.method !== 'HEAD').map((r) => r.method);
    if (allowed.length > 0) return sendError(reply, Errors.METHOD_NOT_ALLOWED(`${req.method} is not allowed here; use ${allowed.join(', ')}`), { allow: allowed.join(', ') });
    return sendError(reply, Errors.NOT_FOUND(`No OpenADR operation ${req.method} ${path || '/'} on this VTN`));
  });

  app.get('/auth/server', { schema: { hide: true } }, async (req) => ({ tokenURL: `${req.protocol}://${req.host}${OPENADR_PREFIX}/auth/token` }));

  // A client that authenticated with HTTP Basic is answered a Basic challenge (RFC 6749 §5.2), not the listener's Bearer one.
  const basicChallenge = (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
    if (reply.statusCode === 401 && basicCredentials(req) !== undefined) reply.header('www-authenticate', 'Basic realm="OpenADR 3 VTN"');
    done(null, payload);
  };

  app.post('/auth/token', { schema: { hide: true }, onSend: basicChallenge }, async (req, reply) => {
    const form = req.body as FormFields | undefined;
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '') || !form) return tokenError(reply, 400, 'invalid_request', 'The token request is a form (application/x-www-form-urlencoded)');
    const repeated = Object.keys(form).find((k) => form[k]!.length > 1);
    if (repeated) return tokenError(reply, 400, 'invalid_request', `${repeated} is given more than once`);
    const field = (k: string) => form[k]?.[0];
    const grantType = field('grant_type');
    if (!grantType) return tokenError(reply, 400, 'invalid_request', 'grant_type is missing');
    if (grantType !== 'client_credentials') return tokenError(reply, 400, 'unsupported_grant_type', 'Only the client_credentials grant is offered');
    const basic = basicCredentials(req);
    if (basic === 'malformed') return tokenError(reply, 401, 'invalid_client', 'Malformed Basic credentials');
    if (basic && (field('client_id') !== undefined || field('client_secret') !== undefined)) return tokenError(reply, 400, 'invalid_request', 'Client credentials are given both in the Authorization header and in the form');
    const id = basic?.id ?? field('client_id');
    const secret = basic?.secret ?? field('client_secret');
    if (!id || !secret) return tokenError(reply, 400, 'invalid_request', 'client_id and client_secret are required');
    const client = await clients.authenticate(id, secret);
    if (!client) return tokenError(reply, 401, 'invalid_client', 'Unknown client, wrong secret or revoked client');
    // Each token is a row until it expires: its requests count against the client's limit as its API calls do.
    if (!admitRequest(opts.limiter, `OPENADR:${client.id}`, opts.limits[client.role], reply, refused)) return reply;
    const allowed = ROLE_SCOPES[client.role] as readonly string[];
    const asked = field('scope')?.split(' ').filter(Boolean);
    const notAllowed = asked?.find((s) => !allowed.includes(s));
    if (notAllowed) return tokenError(reply, 400, 'invalid_scope', `A ${client.role} client cannot have the scope ${notAllowed}`);
    const scopes = asked && asked.length > 0 ? [...new Set(asked)] : [...allowed];
    const issued = await clients.issueToken(client, scopes, opts.tokenTtlSeconds);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({ access_token: issued.token, token_type: 'Bearer', expires_in: opts.tokenTtlSeconds, scope: scopes.join(' ') });
  });

  /** One page of the programs the client may read: its utility's (BL) or the catalog (VEN). */
  const programPage = async (grant: OpenAdrGrant, skip: number, limit: number): Promise<OpenAdrProgram[]> => {
    const principal = principalOf(grant);
    if (grant.client.role === 'BL') return (await call(transport, CatalogOperations.listUtilityPrograms, { principal, query: { skip, limit } }, callOpts)).map(utilityProgramToOpenAdr);
    return (await call(transport, CatalogOperations.listPrograms, { principal, query: { skip, limit } }, callOpts)).map(catalogProgramToOpenAdr);
  };

  app.get('/programs', { schema: { hide: true, querystring: PagingQuery }, config: { openadrScopes: ['read_targets'] } }, async (req) => {
    const { skip, limit, targets } = req.query;
    // No program of ours carries targets (programMapping.ts): a targets filter matches none.
    if (limit === 0 || targets !== undefined) return [];
    return programPage(grantOf(req), skip, limit);
  });

  app.post('/programs', { schema: { hide: true, body: ProgramRequest }, config: { openadrScopes: ['write_programs'] } }, async (req, reply) => {
    const grant = grantOf(req);
    // Only a BL client holds write_programs; its utility's catalog is written with the catalog's rules.
    const body = programFromOpenAdr(req.body);
    const created = await call(transport, CatalogOperations.createUtilityProgram, { principal: principalOf(grant), body }, callOpts);
    return reply.code(201).send(utilityProgramToOpenAdr(created));
  });

  app.get('/programs/:programID', { schema: { hide: true, params: z.object({ programID: ObjectId }) }, config: { openadrScopes: ['read_targets'] } }, async (req) => {
    const grant = grantOf(req);
    const id = req.params.programID;
    const notFound = () => Errors.NOT_FOUND(`Program ${id} not found`);
    // Program ids are UUIDs; any other objectID names none of them.
    if (!UUID.test(id)) throw notFound();
    if (grant.client.role === 'BL') return utilityProgramToOpenAdr(await call(transport, CatalogOperations.getUtilityProgram, { principal: principalOf(grant), params: { id } }, callOpts));
    // The integrator view has no read by id without a site: the catalog is paged through.
    for (let skip = 0; ; skip += CATALOG_PAGE_MAX) {
      const page = await call(transport, CatalogOperations.listPrograms, { principal: principalOf(grant), query: { skip, limit: CATALOG_PAGE_MAX } }, callOpts);
      const found = page.find((p) => p.id === id);
      if (found) return catalogProgramToOpenAdr(found);
      if (page.length < CATALOG_PAGE_MAX) throw notFound();
    }
  });

  const forBl = (grant: OpenAdrGrant) => {
    // VENs and resources are not served yet, so nothing targets a VEN client: it reads no event.
    if (grant.client.role !== 'BL') throw Errors.FORBIDDEN('VEN clients read events once VENs and their targets are served; not yet');
    return principalOf(grant);
  };

  app.get(
    '/events',
    { schema: { hide: true, querystring: PagingQuery.extend({ programID: ObjectId.optional(), active: z.enum(['true', 'false']).optional() }) }, config: { openadrScopes: ['read_targets'] } },
    async (req) => {
      const { skip, limit, targets, programID, active } = req.query;
      const principal = forBl(grantOf(req));
      if (limit === 0 || (programID !== undefined && !UUID.test(programID))) return [];
      const status = active === 'true' ? ACTIVE : SHOWN;
      const page = async (s: number, l: number): Promise<OpenAdrEvent[]> => {
        try {
          return (await call(transport, DispatchOperations.listEvents, { principal, query: { skip: s, limit: l, status, ...(programID ? { program_id: programID } : {}) } }, callOpts)).map(eventToOpenAdr);
        } catch (err) {
          // A programID of no program of this utility filters every event out.
          if (err instanceof AppError && err.code === 'NOT_FOUND' && programID) return [];
          throw err;
        }
      };
      if (!targets) return page(skip, limit);
      // An event matches targets it carries all of; the filter runs here, over every page.
      const matching: OpenAdrEvent[] = [];
      for (let s = 0; ; s += CATALOG_PAGE_MAX) {
        const events = await page(s, CATALOG_PAGE_MAX);
        matching.push(...events.filter((e) => targets.every((t) => e.targets?.includes(t))));
        if (events.length < CATALOG_PAGE_MAX || matching.length >= skip + limit) return matching.slice(skip, skip + limit);
      }
    },
  );

  app.get('/events/:eventID', { schema: { hide: true, params: z.object({ eventID: ObjectId }) }, config: { openadrScopes: ['read_targets'] } }, async (req) => {
    const principal = forBl(grantOf(req));
    const id = req.params.eventID;
    const notFound = () => Errors.NOT_FOUND(`Event ${id} not found`);
    if (!UUID.test(id)) throw notFound();
    const event = await call(transport, DispatchOperations.getEvent, { principal, params: { id } }, callOpts);
    if (event.status === 'CANCELED') throw notFound();
    return eventToOpenAdr(event);
  });

  app.post('/events', { schema: { hide: true, body: EventRequest }, config: { openadrScopes: ['write_events'] } }, async (req, reply) => {
    const principal = forBl(grantOf(req));
    const body = eventFromOpenAdr(req.body);
    try {
      const created = await call(transport, DispatchOperations.createEvent, { principal, body }, callOpts);
      return reply.code(201).send(eventToOpenAdr(created));
    } catch (err) {
      // The yaml's createEvent has no 404: a program or target this utility does not have is a bad request.
      if (err instanceof AppError && err.code === 'NOT_FOUND') throw Errors.VALIDATION_ERROR(err.message);
      throw err;
    }
  });

  app.delete('/events/:eventID', { schema: { hide: true, params: z.object({ eventID: ObjectId }) }, config: { openadrScopes: ['write_events'] } }, async (req) => {
    const principal = forBl(grantOf(req));
    const id = req.params.eventID;
    const notFound = () => Errors.NOT_FOUND(`Event ${id} not found`);
    if (!UUID.test(id)) throw notFound();
    // Deleting is canceling: its commands that have not ended are canceled; a canceled event is gone already.
    if ((await call(transport, DispatchOperations.getEvent, { principal, params: { id } }, callOpts)).status === 'CANCELED') throw notFound();
    try {
      return eventToOpenAdr(await call(transport, DispatchOperations.cancelEvent, { principal, params: { id } }, callOpts));
    } catch (err) {
      // The yaml's deleteEvent has no 409: an event that has transpired is a bad request to delete.
      if (err instanceof AppError && err.code === 'EVENT_NOT_MODIFIABLE') throw Errors.VALIDATION_ERROR(err.message);
      throw err;
    }
  });
};
