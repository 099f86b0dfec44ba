/**
 * The standalone white-label portal over HTTP, with real parts: the whole service (real Postgres),
 * a real OpenID provider (oidc-provider, its own keys, login and consent pages driven as a browser
 * posts them), and host names told apart by the Host header. Sign-in, the cookie, the portal
 * session the page trades it for, logout on both sides, every failure ending on a readable page,
 * and two integrators on two host names that never see each other's users or branding.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialCommand, portalCommand, portalOidcCommand } from '@efs/cli';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { battery, uid } from './commissioningHelpers.ts';
import { startTestSystem, type TestSystem } from './harness/system.ts';
import { startTestProvider, type TestProvider } from './oidcProvider.ts';

const run = await tierAvailable('postgres');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  location: string | undefined;
  setCookies: string[];
}

/** One HTTP request through node:http (fetch would not send our Host header). */
function hit(url: string, opts: { method?: string; host?: string; cookie?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: opts.method ?? 'GET',
        headers: {
          accept: 'text/html',
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.cookie ? { cookie: opts.cookie } : {}),
          ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const set = res.headers['set-cookie'] ?? [];
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), location: res.headers.location, setCookies: set });
        });
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** A browser's cookies, one jar per host name (what host-only cookies are). */
class Jar {
  private readonly byHost = new Map<string, Map<string, string>>();
  take(host: string, setCookies: string[]): void {
    let jar = this.byHost.get(host);
    if (!jar) this.byHost.set(host, (jar = new Map()));
    for (const c of setCookies) {
      const [pair, ...attrs] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
  }
  header(host: string): string | undefined {
    const jar = this.byHost.get(host);
    return jar && jar.size > 0 ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }
  /** A copy, to replay what this browser had at some point. */
  clone(): Jar {
    const copy = new Jar();
    for (const [h, jar] of this.byHost) copy.byHost.set(h, new Map(jar));
    return copy;
  }
}

const bootOf = (html: string) => JSON.parse(/<script type="application\/json" id="efs-boot">(.*?)<\/script>/s.exec(html)![1]!) as Record<string, unknown>;

describe.runIf(run)('the standalone portal: OpenID Connect sign-in on the integrator’s host name', () => {
  let t: TestSystem;
  let provider: TestProvider;
  let acme: ApiClient;
  let gridco: ApiClient;
  let portalPort: string;
  let secretDir: string;
  const home = uid('acme-home');
  const home2 = uid('acme-home2');
  const bare = uid('acme-bare');
  const gridHome = uid('grid-home');
  const ACME = 'acme.localhost';
  const GRID = 'gridco.localhost';

  const cliOut = async (command: (io: { out(l: string): void }, env: Record<string, string>) => Promise<number>) => {
    const out: string[] = [];
    const code = await command({ out: (l) => out.push(l) }, { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent', SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY }).catch((err: Error) => {
      out.push(err.message);
      return 1;
    });
    return { code, text: out.join('\n') };
  };
  const oidcCli = (sub: string, args: string[]) => cliOut((io, env) => portalOidcCommand(sub, args, env, io));
  const secretFile = (value: string) => {
    const path = join(secretDir, uid('secret'));
    writeFileSync(path, `${value}\n`);
    return path;
  };
  const portal = (path: string) => `${t.urls.portal}${path}`;
  const origin = (host: string) => `http://${host}:${portalPort}`;

  /** Follows the provider's pages as a browser would: its login form (any password), then consent. */
  async function throughProvider(authorizeUrl: string, login: string, opts: { cancel?: boolean } = {}): Promise<string> {
    const jar = new Jar();
    let next = authorizeUrl;
    let method = 'GET';
    let form: string | undefined;
    for (let i = 0; i < 20; i++) {
      const at = new URL(next);
      if (!next.startsWith(provider.issuer)) return next;
      const r = await hit(next, { method, cookie: jar.header(at.hostname), ...(form !== undefined ? { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      jar.take(at.hostname, r.setCookies);
      form = undefined;
      method = 'GET';
      if (r.location) {
        next = new URL(r.location, next).href;
        continue;
      }
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      if (opts.cancel) {
        next = new URL(/href="([^"]*\/abort)"/.exec(r.text)![1]!, next).href;
        continue;
      }
      const action = /<form[^>]*action="([^"]+)"/.exec(r.text)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(r.text)![1]!;
      next = new URL(action, next).href;
      method = 'POST';
      form = prompt === 'login' ? new URLSearchParams({ prompt, login, password: 'any' }).toString() : new URLSearchParams({ prompt }).toString();
    }
    throw new Error('the provider never sent the browser back');
  }

  /** A whole sign-in on a host: /auth/login, the provider's pages, and the callback; answers the callback's answer. */
  async function signIn(jar: Jar, host: string, login: string, opts: { cancel?: boolean; keepCallback?: (url: string) => void } = {}): Promise<Answer> {
    const start = await hit(portal('/auth/login'), { host: `${host}:${portalPort}`, cookie: jar.header(host) });
    expect(start.status, start.text).toBe(303);
    jar.take(host, start.setCookies);
    const back = await throughProvider(start.location!, login, opts);
    expect(back.startsWith(`${origin(host)}/auth/oidc/callback?`), back).toBe(true);
    opts.keepCallback?.(back);
    const u = new URL(back);
    const answer = await hit(portal(`${u.pathname}${u.search}`), { host: `${host}:${portalPort}`, cookie: jar.header(host) });
    jar.take(host, answer.setCookies);
    return answer;
  }

  const exchange = (jar: Jar, host: string, body: Record<string, unknown> = {}) =>
    hit(portal('/auth/portal_session'), { method: 'POST', host: `${host}:${portalPort}`, cookie: jar.header(host), body: JSON.stringify(body), headers: { 'content-type': 'application/json', accept: 'application/json' } });

  beforeAll(async () => {
    secretDir = mkdtempSync(join(tmpdir(), 'efs-oidc-'));
    t = await startTestSystem({ PORTAL_OIDC_CACHE_MS: '200' });
    portalPort = new URL(t.urls.portal).port;
    const token = async (integrator: string, name: string) => /token: (efs_ct_\S+)/.exec((await cliOut((io, env) => credentialCommand('client-token', 'create', ['--integrator', integrator, '--name', name], env, io))).text)![1]!;
    acme = apiClient(t.urls.public, await token('acme', 'Acme Energy'));
    gridco = apiClient(t.urls.public, await token('gridco', 'Gridco Power'));
    await waitFor(async () => (await acme.get('/v1/sites')).status === 200 && (await gridco.get('/v1/sites')).status === 200, { timeoutMs: 5000, what: 'the client tokens' });
    for (const [client, site] of [[acme, home], [acme, home2], [gridco, gridHome]] as const) {
      const s = await client.post('/v1/sessions', { site: { id: site, zip_code: '88801' }, devices: [battery(site, `${site}-bat`)] });
      expect(s.status, JSON.stringify(s.body)).toBe(200);
    }
    const b = await acme.post('/v1/sessions', { site: { id: bare, zip_code: '88801' } });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    await cliOut((io, env) => portalCommand('branding', ['--integrator', 'gridco', '--primary-button-background', '#00aa55'], env, io));

    provider = await startTestProvider({
      claim: 'site_id',
      accounts: {
        alice: { site_id: home },
        bob: { site_id: [home2, home, 'not-a-site'] },
        carol: {},
        dave: { site_id: gridHome },
        erin: { site_id: bare },
        frank: { site_id: 'nobody-knows-this-site' },
      },
      clients: [
        { client_id: 'acme-portal', client_secret: 'acme-secret-value', origins: [`http://${ACME}:${portalPort}`, `https://energy.acme.test`] },
        { client_id: 'gridco-portal', client_secret: 'gridco-secret-value', origins: [`http://${GRID}:${portalPort}`] },
      ],
    });
    const set = await oidcCli('set', ['--integrator', 'acme', '--issuer', provider.issuer, '--client-id', 'acme-portal', '--client-secret-file', secretFile('acme-secret-value'), '--site-claim', 'site_id', '--host', ACME, '--host', 'Energy.Acme.Test']);
    expect(set.code, set.text).toBe(0);
    const set2 = await oidcCli('set', ['--integrator', 'gridco', '--issuer', provider.issuer, '--client-id', 'gridco-portal', '--client-secret-file', secretFile('gridco-secret-value'), '--host', GRID]);
    expect(set2.code, set2.text).toBe(0);
  });
  afterAll(async () => {
    await provider?.close();
    await t?.stop();
  });

  it('the CLI shows the settings without the secret, keeps the secret sealed, and refuses bad input before writing', async () => {
    const shown = await oidcCli('show', ['--integrator', 'acme']);
    expect(shown.code).toBe(0);
    expect(shown.text).not.toContain('acme-secret-value');
    expect(JSON.parse(shown.text)).toMatchObject({ integrator_id: 'acme', issuer: provider.issuer, client_id: 'acme-portal', site_claim: 'site_id', scopes: ['openid'], hosts: [ACME, 'energy.acme.test'], redirect_uris: [`https://${ACME}/auth/oidc/callback`, 'https://energy.acme.test/auth/oidc/callback'] });
    const db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    const stored = (await db.query<{ client_secret: string }>("select client_secret from auth.portal_oidc where integrator_id = 'acme'").finally(() => db.end())).rows[0]!;
    expect(stored.client_secret).toMatch(/^enc:v1:/);
    expect(stored.client_secret).not.toContain('acme-secret-value');
    expect(await oidcCli('set', ['--integrator', 'acme', '--issuer', 'http://login.acme.example', '--client-id', 'x', '--client-secret-file', secretFile('s'), '--host', ACME])).toMatchObject({ code: 1, text: expect.stringContaining('--issuer') });
    expect(await oidcCli('set', ['--integrator', 'acme', '--issuer', provider.issuer, '--client-id', 'x', '--client-secret-file', secretFile('s'), '--host', 'https://acme.example/'])).toMatchObject({ code: 1, text: expect.stringContaining('--host') });
    expect(await oidcCli('set', ['--integrator', 'acme', '--issuer', provider.issuer, '--client-id', 'x', '--client-secret-file', join(secretDir, 'missing'), '--host', ACME])).toMatchObject({ code: 1, text: expect.stringContaining('--client-secret-file') });
    // A host name is one integrator's.
    expect(await oidcCli('set', ['--integrator', 'gridco', '--issuer', provider.issuer, '--client-id', 'gridco-portal', '--client-secret-file', secretFile('gridco-secret-value'), '--host', ACME])).toMatchObject({ code: 1, text: expect.stringContaining('already the portal of integrator acme') });
    expect(await oidcCli('show', ['--integrator', 'nobody'])).toMatchObject({ code: 1 });
    expect(JSON.parse((await oidcCli('show', ['--integrator', 'acme'])).text).client_id).toBe('acme-portal');
  });

  it('an unknown host name gets a plain 404 page, never an integrator’s portal', async () => {
    for (const path of ['/', '/auth/login', '/auth/oidc/callback?code=x&state=y', '/auth/logout']) {
      const r = await hit(portal(path), { host: `unknown.localhost:${portalPort}` });
      expect(r.status, path).toBe(404);
      expect(r.headers['content-type']).toMatch(/^text\/html/);
      expect(r.text).toContain('There is no portal at this address');
      expect(r.text).not.toMatch(/acme|gridco/i);
    }
    // The listener's own address (the embedded portal's) is no standalone portal either.
    expect((await hit(portal('/'))).status).toBe(404);
    // Anything but a browser gets the error body.
    const api = await hit(portal('/auth/portal_session'), { method: 'POST', host: `unknown.localhost:${portalPort}`, body: '{}', headers: { 'content-type': 'application/json', accept: 'application/json' } });
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text)).toMatchObject({ code: 'NOT_FOUND', status_code: 404 });
    expect(JSON.parse((await hit(portal('/'), { host: `unknown.localhost:${portalPort}`, headers: { accept: 'application/json' } })).text)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('signs a user in with authorization code, PKCE and nonce, and the page trades the cookie for a portal session on the site’s API', async () => {
    const jar = new Jar();
    const start = await hit(portal('/'), { host: `${ACME}:${portalPort}` });
    expect(start.status).toBe(303);
    expect(start.location).toBe('/auth/login');
    const login = await hit(portal('/auth/login'), { host: `${ACME}:${portalPort}` });
    const authorize = new URL(login.location!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ client_id: 'acme-portal', response_type: 'code', scope: 'openid', code_challenge_method: 'S256', redirect_uri: `${origin(ACME)}/auth/oidc/callback` });
    expect(authorize.searchParams.get('state')).toMatch(/.{20,}/);
    expect(authorize.searchParams.get('nonce')).toMatch(/.{20,}/);
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(login.headers['ratelimit-policy']).toBeDefined();

    const done = await signIn(jar, ACME, 'alice');
    expect(done.status, done.text.slice(0, 500)).toBe(303);
    // The callback takes no credential: it counts against the client address's limit.
    expect(done.headers['ratelimit-policy']).toBeDefined();
    expect(done.location).toBe('/');
    const cookie = done.setCookies.find((c) => c.startsWith('efs_portal_login='))!;
    // Plain http on a loopback host: no Secure (a browser would drop it), so no __Host- prefix either.
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; Max-Age=28800/);
    expect(cookie).not.toMatch(/Domain=/);

    const page = await hit(portal('/'), { host: `${ACME}:${portalPort}`, cookie: jar.header(ACME) });
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(bootOf(page.text)).toMatchObject({ state: 'signed_in', sites: [home], integrator_name: 'Acme Energy' });

    const s = await exchange(jar, ACME);
    expect(s.status, s.text).toBe(200);
    const session = JSON.parse(s.text) as { session: string; site_id: string; expires_at: string };
    expect(session.site_id).toBe(home);
    expect(session.session).toMatch(/^efs_ps_/);
    expect(Date.parse(session.expires_at) - Date.now()).toBeLessThanOrEqual(300_000);
    const site = await apiClient(t.urls.portal, session.session).get(`/v1/site/${home}`);
    expect(site.status, JSON.stringify(site.body)).toBe(200);
    expect(site.body.id).toBe(home);
    // One site only: another site of the same integrator is refused.
    expect((await apiClient(t.urls.portal, session.session).get(`/v1/site/${home2}`)).status).toBe(403);
  });

  it('sets a Secure __Host- cookie where the scheme is https (any host name but loopback ones: TLS ends at the ingress)', async () => {
    const login = await hit(portal('/auth/login'), { host: 'energy.acme.test' });
    expect(login.status).toBe(303);
    expect(new URL(login.location!).searchParams.get('redirect_uri')).toBe('https://energy.acme.test/auth/oidc/callback');
    const cookie = login.setCookies.find((c) => c.startsWith('__Host-efs_portal_sign_in='))!;
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
  });

  it('lets a user whose claim names several sites choose one, and only among them', async () => {
    const jar = new Jar();
    expect((await signIn(jar, ACME, 'bob')).status).toBe(303);
    const page = await hit(portal('/'), { host: `${ACME}:${portalPort}`, cookie: jar.header(ACME) });
    // Sites the integrator does not have are left out.
    expect(bootOf(page.text)).toMatchObject({ state: 'signed_in', sites: [home2, home] });
    const none = await exchange(jar, ACME);
    expect(none.status).toBe(400);
    expect(JSON.parse(none.text)).toMatchObject({ code: 'VALIDATION_ERROR', status_code: 400 });
    expect((await exchange(jar, ACME, { site_id: gridHome })).status).toBe(403);
    const chosen = await exchange(jar, ACME, { site_id: home2 });
    expect(chosen.status).toBe(200);
    expect(JSON.parse(chosen.text).site_id).toBe(home2);
  });

  it('logs out on the server (the old cookie gets 401) and at the provider (RP-initiated logout)', async () => {
    const jar = new Jar();
    await signIn(jar, ACME, 'alice');
    const old = jar.clone();
    expect((await exchange(jar, ACME)).status).toBe(200);
    const out = await hit(portal('/auth/logout'), { host: `${ACME}:${portalPort}`, cookie: jar.header(ACME) });
    expect(out.status).toBe(303);
    const end = new URL(out.location!);
    expect(`${end.origin}${end.pathname}`).toBe(`${provider.issuer}/session/end`);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${origin(ACME)}/auth/logout`);
    expect(end.searchParams.get('id_token_hint')).toMatch(/^ey/);
    expect(out.setCookies.some((c) => /^efs_portal_login=;/.test(c) && /Max-Age=0/.test(c))).toBe(true);
    const after = await exchange(old, ACME);
    expect(after.status).toBe(401);
    expect(JSON.parse(after.text)).toMatchObject({ code: 'UNAUTHORIZED' });
    const page = await hit(portal('/'), { host: `${ACME}:${portalPort}`, cookie: old.header(ACME) });
    expect(page.status).toBe(303);
    // Back from the provider: a page saying so, with a way to sign in again.
    const back = await hit(portal('/auth/logout'), { host: `${ACME}:${portalPort}` });
    expect(back.status).toBe(200);
    expect(bootOf(back.text)).toMatchObject({ state: 'refused', title: 'You have signed out', retry_url: '/auth/login' });
  });

  it('rotates the cookie on every sign-in and ends the one before', async () => {
    const jar = new Jar();
    await signIn(jar, ACME, 'alice');
    const first = jar.clone();
    await signIn(jar, ACME, 'alice');
    expect(jar.header(ACME)).not.toBe(first.header(ACME));
    expect((await exchange(first, ACME)).status).toBe(401);
    expect((await exchange(jar, ACME)).status).toBe(200);
  });

  /** The callback's page: readable, no 500, with the way to start again. */
  const expectStopped = (a: Answer, status: number, title: RegExp) => {
    expect(a.status, a.text.slice(0, 300)).toBe(status);
    expect(a.headers['content-type']).toMatch(/^text\/html/);
    const boot = bootOf(a.text);
    expect(boot.state).toBe('refused');
    expect(String(boot.title)).toMatch(title);
    expect(boot.retry_url).toBe('/auth/login');
    expect(a.setCookies.some((c) => c.startsWith('efs_portal_login=') && !/Max-Age=0/.test(c))).toBe(false);
  };

  it('ends every failed sign-in on a readable page with a way to start again', async () => {
    expectStopped(await signIn(new Jar(), ACME, 'alice', { cancel: true }), 401, /cancelled/);
    const noClaim = await signIn(new Jar(), ACME, 'carol');
    expectStopped(noClaim, 403, /No home/);
    expectStopped(await signIn(new Jar(), ACME, 'dave'), 403, /not known here/);
    expectStopped(await signIn(new Jar(), ACME, 'frank'), 403, /not known here/);
    expectStopped(await signIn(new Jar(), ACME, 'erin'), 403, /not set up yet/);
  });

  it('refuses a wrong or replayed state and a replayed code', async () => {
    const jar = new Jar();
    let callback = '';
    await signIn(jar, ACME, 'alice', { keepCallback: (u) => (callback = u) });
    const u = new URL(callback);
    // Replayed in another browser (no sign-in cookie) and in the same one (state used).
    expectStopped(await hit(portal(`${u.pathname}${u.search}`), { host: `${ACME}:${portalPort}` }), 400, /cannot be finished/);
    const start = await hit(portal('/auth/login'), { host: `${ACME}:${portalPort}` });
    const state = new URL(start.location!).searchParams.get('state')!;
    const cookie = start.setCookies[0]!.split(';')[0]!;
    const replayedState = new URL(u);
    expectStopped(await hit(portal(`${replayedState.pathname}${replayedState.search}`), { host: `${ACME}:${portalPort}`, cookie: `efs_portal_sign_in=${u.searchParams.get('state')}` }), 400, /cannot be finished/);
    const wrong = new URL(u);
    wrong.searchParams.set('state', 'not-the-state');
    expectStopped(await hit(portal(`${wrong.pathname}${wrong.search}`), { host: `${ACME}:${portalPort}`, cookie }), 400, /cannot be finished/);
    // The old code with this browser's new, valid state: the provider refuses the code's second use.
    const replayedCode = new URL(u);
    replayedCode.searchParams.set('state', state);
    expectStopped(await hit(portal(`${replayedCode.pathname}${replayedCode.search}`), { host: `${ACME}:${portalPort}`, cookie }), 401, /cannot be finished/);
  });

  it('finishes a sign-in only in the browser that started it (no one is signed in to someone else’s account)', async () => {
    const a = new Jar();
    const start = await hit(portal('/auth/login'), { host: `${ACME}:${portalPort}` });
    a.take(ACME, start.setCookies);
    const back = new URL(await throughProvider(start.location!, 'alice'));
    const elsewhere = await hit(portal(`${back.pathname}${back.search}`), { host: `${ACME}:${portalPort}` });
    expectStopped(elsewhere, 400, /cannot be finished/);
    const here = await hit(portal(`${back.pathname}${back.search}`), { host: `${ACME}:${portalPort}`, cookie: a.header(ACME) });
    expect(here.status).toBe(303);
  });

  it('refuses a tampered or expired ID token, and says so when the provider cannot be reached', async () => {
    try {
      provider.tokenMode = 'tamper-signature';
      expectStopped(await signIn(new Jar(), ACME, 'alice'), 401, /could not be checked/);
      provider.tokenMode = 'expired';
      expectStopped(await signIn(new Jar(), ACME, 'alice'), 401, /could not be checked/);
      provider.tokenMode = 'unreachable';
      expectStopped(await signIn(new Jar(), ACME, 'alice'), 502, /could not reach/);
    } finally {
      provider.tokenMode = 'pass';
    }
    // A provider that is down before the sign-in starts (its issuer changed to a closed port, which applies without a restart).
    const closed = await oidcCli('set', ['--integrator', 'gridco', '--issuer', 'http://127.0.0.1:9', '--client-id', 'gridco-portal', '--client-secret-file', secretFile('gridco-secret-value'), '--host', GRID]);
    expect(closed.code, closed.text).toBe(0);
    try {
      await waitFor(async () => (await hit(portal('/auth/login'), { host: `${GRID}:${portalPort}` })).status === 502, { timeoutMs: 5000, what: 'the new issuer in use' });
      const down = await hit(portal('/auth/login'), { host: `${GRID}:${portalPort}` });
      expect(bootOf(down.text)).toMatchObject({ state: 'refused', title: 'We could not reach the sign-in service', retry_url: '/auth/login' });
    } finally {
      await oidcCli('set', ['--integrator', 'gridco', '--issuer', provider.issuer, '--client-id', 'gridco-portal', '--client-secret-file', secretFile('gridco-secret-value'), '--host', GRID]);
    }
    await waitFor(async () => (await hit(portal('/auth/login'), { host: `${GRID}:${portalPort}` })).status === 303, { timeoutMs: 5000, what: 'the issuer back' });
  });

  it('keeps two integrators on two host names apart: users, cookies and branding', async () => {
    const jar = new Jar();
    // Gridco's user at Acme's portal: the site is not Acme's.
    expectStopped(await signIn(jar, ACME, 'dave'), 403, /not known here/);
    expect((await signIn(jar, GRID, 'dave')).status).toBe(303);
    const gridPage = await hit(portal('/'), { host: `${GRID}:${portalPort}`, cookie: jar.header(GRID) });
    expect(bootOf(gridPage.text)).toMatchObject({ state: 'signed_in', sites: [gridHome], integrator_name: 'Gridco Power' });
    expect(gridPage.text).toContain('/branding/gridco/theme.css');
    // Gridco's cookie sent to Acme's host (as no browser would): no session there.
    const crossed = await hit(portal('/'), { host: `${ACME}:${portalPort}`, cookie: jar.header(GRID) });
    expect(crossed.status).toBe(303);
    const crossedSession = await hit(portal('/auth/portal_session'), { method: 'POST', host: `${ACME}:${portalPort}`, cookie: jar.header(GRID), body: '{}', headers: { 'content-type': 'application/json', accept: 'application/json' } });
    expect(crossedSession.status).toBe(401);
    // Acme's portal never shows Gridco's branding.
    const acmeJar = new Jar();
    await signIn(acmeJar, ACME, 'alice');
    const acmePage = await hit(portal('/'), { host: `${ACME}:${portalPort}`, cookie: acmeJar.header(ACME) });
    expect(acmePage.text).not.toContain('gridco');
    expect(bootOf(acmePage.text).integrator_name).toBe('Acme Energy');
  });

  it("opens on an integrator's host name none of another integrator's portal links, nor its branding", async () => {
    const link = async (client: ApiClient, site: string) => {
      const s = await client.post('/v1/sessions', { site: { id: site, zip_code: '88801' } });
      expect(s.status, JSON.stringify(s.body)).toBe(200);
      return new URL(s.body.portal_url as string).searchParams.get('token')!;
    };
    const json = { 'content-type': 'application/json', accept: 'application/json' };
    // Gridco's link on Acme's host: refused (looked at and redeemed), and still good on Gridco's own.
    const gridLink = await link(gridco, gridHome);
    expect((await hit(portal(`/auth/session_token?token=${gridLink}`), { host: `${ACME}:${portalPort}`, headers: { accept: 'application/json' } })).status).toBe(401);
    expect((await hit(portal('/auth/session_token'), { method: 'POST', host: `${ACME}:${portalPort}`, body: JSON.stringify({ token: gridLink }), headers: json })).status).toBe(401);
    const redeemed = await hit(portal('/auth/session_token'), { method: 'POST', host: `${GRID}:${portalPort}`, body: JSON.stringify({ token: gridLink }), headers: json });
    expect(redeemed.status, redeemed.text).toBe(200);
    // Acme's own link on Acme's host opens.
    const acmeLink = await link(acme, home);
    expect((await hit(portal('/auth/session_token'), { method: 'POST', host: `${ACME}:${portalPort}`, body: JSON.stringify({ token: acmeLink }), headers: json })).status).toBe(200);
    // Gridco's branding is Gridco's on its host and the defaults on Acme's.
    const css = async (host: string) => (await hit(portal('/branding/gridco/theme.css'), { host: `${host}:${portalPort}` })).text;
    expect(await css(GRID)).toContain('#00aa55');
    expect(await css(ACME)).not.toContain('#00aa55');
  });

  it('unset removes the portal: its host names answer 404 without a restart', async () => {
    const jar = new Jar();
    await signIn(jar, GRID, 'dave');
    expect((await oidcCli('unset', ['--integrator', 'gridco'])).code).toBe(0);
    await waitFor(async () => (await hit(portal('/'), { host: `${GRID}:${portalPort}`, cookie: jar.header(GRID) })).status === 404, { timeoutMs: 5000, what: 'the portal gone' });
    expect((await oidcCli('show', ['--integrator', 'gridco'])).code).toBe(1);
  });
});
