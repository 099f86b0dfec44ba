/**
 * The property-based fuzz tier (issue 15): every operation of every listener's OpenAPI document
 * (the public and utility APIs, and the site routes the portal listener serves for portal
 * sessions), called with generated requests full of hostile values (test/fuzz/openApiRequests.ts).
 * Whatever is sent: no 5xx, every 4xx carries the specification's error body, and a refused
 * request stores nothing (row counts of every table requests write, read before and after).
 * Hostile Cookie and Authorization headers on every operation are refused with a 4xx and the error
 * body: a cookie is never a credential (decisions.md), and no malformed value reaches a 5xx.
 * A fixed seed makes every run send the same requests; the run is bounded to about a minute.
 *
 *   npx vitest run test/fuzz             # this tier alone
 *   FUZZ_SEED=123 FUZZ_REQUESTS=5000 npx vitest run test/fuzz   # another seed, a longer run
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, tierAvailable } from '@efs/testing';
import { startTestSystem, type TestSystem } from '../harness/system.ts';
import { battery, fullSite, SandboxProgramIds, siteToken } from '../commissioningHelpers.ts';
import { operationsOf, RequestArbitraries, type GeneratedRequest, type OpenApiDocument, type Operation } from './openApiRequests.ts';

const run = await tierAvailable('postgres');
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** Requests over all operations (about a minute on the shared 2-core machine). */
const BUDGET = Number(process.env.FUZZ_REQUESTS ?? 1200);

/** Tables that requests write synchronously (read models, outboxes and background bookkeeping excluded). */
const WRITTEN_TABLES = [
  'commissioning.sites', 'commissioning.devices', 'commissioning.supplements',
  'catalog.programs', 'catalog.program_zip_codes', 'catalog.program_terms',
  'enrollment.enrollments', 'enrollment.program_groups', 'enrollment.enrollment_groups',
  'dispatch.events', 'dispatch.settings_requests',
  'auth.session_tokens', 'auth.idempotency_keys',
];

interface Finding {
  operation: string;
  request: string;
  status: number;
  problem: string;
}

describe.runIf(run)('fuzz tier: generated hostile requests for every operation of the OpenAPI documents', () => {
  let t: TestSystem;
  let db: pg.Client;
  const findings: Finding[] = [];
  let sent = 0;
  let refused = 0;
  /** Credentials by OpenAPI security scheme, with the listener each is used on. */
  const credentials: Record<string, { base: string; token: string }> = {};
  const uncovered: string[] = [];
  let plan: { listener: string; scheme: string; op: Operation; arbitraries: RequestArbitraries; base: string; token: string }[] = [];

  /** Counts of every written table and the last change of sites and programs, in one statement. */
  const snapshot = async (): Promise<string> => {
    const counts = WRITTEN_TABLES.map((tbl) => `(select count(*) from ${tbl})`).join(' || \',\' || ');
    const r = await db.query(`select ${counts} || ',' || coalesce((select max(updated_at)::text from commissioning.sites), '') || ',' || coalesce((select max(updated_at)::text from catalog.programs), '') as s`);
    return r.rows[0].s as string;
  };

  beforeAll(async () => {
    t = await startTestSystem({ RATE_LIMIT_CLIENT: '1000000', RATE_LIMIT_SITE: '1000000', RATE_LIMIT_SESSION: '1000000', RATE_LIMIT_UTILITY: '1000000' });
    db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    // A site with a battery the credentials may reach, its site token and a portal session for it.
    const siteId = 'fuzz-site';
    const deviceId = 'fuzz-battery';
    expect((await t.api.post('/v1/commission', { site: fullSite(siteId), devices: [battery(siteId, deviceId)], can_auto_enroll: true })).status).toBe(200);
    const session = await t.api.post('/v1/sessions', { site: { id: siteId } });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const redeemed = await t.portal.post('/auth/session_token', { token: session.body.token });
    expect(redeemed.status).toBe(200);
    const fixtures: Record<string, string> = { siteId, deviceId, programId: SandboxProgramIds.batteryAutoEnroll, id: SandboxProgramIds.batteryCapacity };
    const docs: Record<string, OpenApiDocument> = {
      public: (await fetch(`${t.urls.public}/openapi.json`).then((r) => r.json())) as OpenApiDocument,
      utility: (await fetch(`${t.urls.utility}/openapi.json`).then((r) => r.json())) as OpenApiDocument,
    };
    credentials.clientToken = { base: t.urls.public, token: SANDBOX_CLIENT_TOKEN };
    credentials.utilityKey = { base: t.urls.utility, token: SANDBOX_UTILITY_API_KEY };
    credentials.siteToken = { base: t.urls.public, token: await siteToken(t, siteId) };
    credentials.portalSession = { base: t.urls.portal, token: redeemed.body.session };
    for (const [listener, doc] of Object.entries(docs)) {
      const arbitraries = new RequestArbitraries(doc, fixtures);
      for (const op of operationsOf(doc)) {
        // Each operation with every credential kind it accepts (portal sessions on the portal listener).
        const before = plan.length;
        for (const scheme of op.securitySchemes) {
          const c = credentials[scheme];
          if (c) plan.push({ listener: scheme === 'portalSession' ? 'portal' : listener, scheme, op, arbitraries, base: c.base, token: c.token });
        }
        // An operation no credential here can call would go unfuzzed: the tier fails instead.
        if (plan.length === before) uncovered.push(`${listener} ${op.method} ${op.path} (${op.securitySchemes.join(', ') || 'no security'})`);
      }
    }
    plan = plan.sort((a, b) => `${a.listener} ${a.op.path} ${a.op.method} ${a.scheme}`.localeCompare(`${b.listener} ${b.op.path} ${b.op.method} ${b.scheme}`));
  }, 180_000);

  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  const send = async (base: string, token: string, req: GeneratedRequest): Promise<{ status: number; text: string; contentType: string }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${base}${req.path}`, { method: req.method, headers, ...(req.body !== undefined ? { body: req.body } : {}) });
    return { status: r.status, text: await r.text(), contentType: r.headers.get('content-type') ?? '' };
  };

  const errorBodyProblem = (status: number, text: string, contentType: string): string | undefined => {
    if (!contentType.startsWith('application/json')) return `content-type ${contentType}`;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return 'body is not JSON';
    }
    const keys = Object.keys(body).sort().join(',');
    if (keys !== 'code,detail,errors,message,status_code') return `error body keys ${keys}`;
    if (body.status_code !== status || typeof body.code !== 'string' || typeof body.message !== 'string') return `error body ${text.slice(0, 200)}`;
    if (!Array.isArray(body.detail) || !Array.isArray(body.errors)) return 'detail/errors not arrays';
    return undefined;
  };

  it('answers every generated request without a 5xx, with the error body on every 4xx, and stores nothing for a refusal', { timeout: 600_000 }, async () => {
    expect(uncovered).toEqual([]);
    expect(new Set(plan.map((p) => `${p.op.method} ${p.op.path}`)).size).toBeGreaterThan(40);
    const runs = Math.max(6, Math.floor(BUDGET / plan.length));
    for (const p of plan) {
      const name = `${p.listener} ${p.op.method} ${p.op.path} (${p.scheme})`;
      // Each operation gets its own seed (derived from the run's), so adding one does not change the others' requests.
      await fc.assert(
        fc.asyncProperty(p.arbitraries.request(p.op), async (req) => {
          const before = await snapshot();
          const r = await send(p.base, p.token, req);
          sent++;
          const shown = `${req.method} ${req.path.slice(0, 300)} ${req.body?.slice(0, 300) ?? ''}`;
          if (r.status >= 500) findings.push({ operation: name, request: shown, status: r.status, problem: r.text.slice(0, 300) });
          if (r.status >= 400) {
            refused++;
            const bad = errorBodyProblem(r.status, r.text, r.contentType);
            if (bad) findings.push({ operation: name, request: shown, status: r.status, problem: bad });
            if (r.status < 500 || r.status === 503) {
              const after = await snapshot();
              if (after !== before) findings.push({ operation: name, request: shown, status: r.status, problem: `stored something: ${before} -> ${after}` });
            }
          }
        }),
        { seed: SEED + hash(name), numRuns: runs, endOnFailure: true },
      );
    }
    console.log(`fuzz tier: ${plan.length} operation × credential pairs, ${sent} requests (${refused} refused), seed ${SEED}, ${findings.length} findings`);
    if (findings.length > 0) {
      mkdirSync('.run', { recursive: true });
      writeFileSync('.run/fuzz-findings.json', JSON.stringify(findings, null, 2));
      console.log('fuzz findings (all of them in .run/fuzz-findings.json):', findings.length);
    }
    expect(findings.slice(0, 20)).toEqual([]);
  });

  it('answers hostile Cookie and Authorization headers on every operation with a 4xx and the error body, never a 5xx', { timeout: 300_000 }, async () => {
    // Printable ASCII with what breaks naive parsers: percent escapes, quotes, separators.
    const headerText = fc.string({ unit: fc.oneof(fc.constantFrom(...'%;=", \\abcZ09_-/+'.split('')), fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c))), maxLength: 80 });
    const cookie = fc.oneof(
      headerText.map((v) => `efs_portal_session=${v}`),
      headerText.map((v) => `efs_portal_session=efs_ps_${v}`),
      fc.tuple(headerText, headerText).map(([a, b]) => `${a}; efs_portal_session=${b}`),
      headerText,
    );
    const authorization = fc.option(fc.oneof(headerText.map((v) => `Bearer ${v}`), headerText.map((v) => `Bearer efs_ps_${v}`), headerText), { nil: undefined });
    const targets = [...new Map(plan.map((p) => [`${p.base} ${p.op.method} ${p.op.path}`, p])).values()];
    let hostile = 0;
    const found: Finding[] = [];
    for (const p of targets) {
      const name = `${p.listener} ${p.op.method} ${p.op.path} (cookies)`;
      await fc.assert(
        fc.asyncProperty(p.arbitraries.request(p.op), cookie, authorization, async (req, c, auth) => {
          const headers: Record<string, string> = { cookie: c };
          if (auth !== undefined) headers.authorization = auth;
          if (req.body !== undefined) headers['content-type'] = 'application/json';
          const r = await fetch(`${p.base}${req.path}`, { method: req.method, headers, ...(req.body !== undefined ? { body: req.body } : {}) });
          const text = await r.text();
          hostile++;
          const shown = `${req.method} ${req.path.slice(0, 200)} cookie=${c} authorization=${auth ?? ''}`;
          if (r.status >= 500) found.push({ operation: name, request: shown, status: r.status, problem: text.slice(0, 300) });
          else if (r.status < 400) found.push({ operation: name, request: shown, status: r.status, problem: 'a hostile credential was accepted' });
          else {
            const bad = errorBodyProblem(r.status, text, r.headers.get('content-type') ?? '');
            if (bad) found.push({ operation: name, request: shown, status: r.status, problem: bad });
          }
        }),
        { seed: SEED + hash(name), numRuns: 4, endOnFailure: true },
      );
    }
    console.log(`fuzz tier: ${hostile} requests with hostile cookies and Authorization headers over ${targets.length} operations, ${found.length} findings`);
    expect(found.slice(0, 20)).toEqual([]);
  });
});

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + c.charCodeAt(0)) | 0;
  return Math.abs(h) % 100_000;
}
