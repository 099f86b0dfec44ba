/**
 * The standalone white-label portal as an end user meets it: Debian's Chromium on the
 * integrator's own host name (acme.localhost and gridco.localhost, mapped to the loopback
 * listener), signing in through a real OpenID provider's login and consent pages (oidc-provider 9),
 * the whole portal working on the session it hands over, choosing among several homes, cancelling
 * at the provider, logging out on both sides, two integrators never showing each other's users or
 * branding, a phone's width and axe-core.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { credentialCommand, portalCommand, portalOidcCommand } from '@efs/cli';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { REFRESH_INTERVAL_MS } from '../../portal/src/queryClient.ts';
import { battery, uid } from '../commissioningHelpers.ts';
import { startTestSystem, type TestSystem } from '../harness/system.ts';
import { startTestProvider, type TestProvider } from '../oidcProvider.ts';
import { axeViolations, horizontalOverflow, launchChromium, type Browser } from './chromium.ts';

const run = await tierAvailable('browser');
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '.run', 'screenshots');
// Chromium resolves *.localhost to loopback itself; pinning it to 127.0.0.1 (where the listener is) keeps it off ::1.
const HOST_RULES = '--host-resolver-rules=MAP acme.localhost 127.0.0.1, MAP gridco.localhost 127.0.0.1';

describe.runIf(run)('the standalone portal in Chromium, signed in with the integrator’s OpenID provider', () => {
  let t: TestSystem;
  let provider: TestProvider;
  let acme: ApiClient;
  let browser: Browser;
  let page: Page;
  let port: string;
  const home = uid('home');
  const home2 = uid('home2');
  const gridHome = uid('grid');
  const acmeUrl = () => `http://acme.localhost:${port}`;
  const gridUrl = () => `http://gridco.localhost:${port}`;
  const apiCookies: string[] = [];
  /** When each portal session the page got (POST /auth/portal_session) expires. */
  const bearerExpiries: number[] = [];
  /** Polls until every portal session the page holds has expired (the page must renew the next one). */
  const bearersExpired = () => waitFor(async () => bearerExpiries.length > 0 && Date.now() > Math.max(...bearerExpiries) + 100, { timeoutMs: 15_000, what: 'the portal session to expire' });

  const cli = async (command: (io: { out(l: string): void }, env: Record<string, string>) => Promise<number>) => {
    const out: string[] = [];
    const code = await command({ out: (l) => out.push(l) }, { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent', SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY });
    expect(code, out.join('\n')).toBe(0);
    return out.join('\n');
  };

  /** The provider's own pages: its login form (any password), then its consent page. */
  const throughProvider = async (p: Page, login: string) => {
    await p.waitForURL((u) => u.href.startsWith(provider.issuer));
    if (await p.locator('input[name="login"]').count()) {
      await p.locator('input[name="login"]').fill(login);
      await p.locator('input[name="password"]').fill('correct horse battery staple');
      await p.getByRole('button', { name: 'Sign-in' }).click();
    }
    await p.getByRole('button', { name: 'Continue' }).click();
  };

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Portal sessions of a few seconds: the page renews them with its login cookie as it goes.
    t = await startTestSystem({ PORTAL_SESSION_TTL_S: '3' });
    port = new URL(t.urls.portal).port;
    const token = async (id: string, name: string) => /token: (efs_ct_\S+)/.exec(await cli((io, env) => credentialCommand('client-token', 'create', ['--integrator', id, '--name', name], env, io)))![1]!;
    acme = apiClient(t.urls.public, await token('acme', 'Acme Energy'));
    const gridco = apiClient(t.urls.public, await token('gridco', 'Gridco Power'));
    await waitFor(async () => (await acme.get('/v1/sites')).status === 200 && (await gridco.get('/v1/sites')).status === 200, { timeoutMs: 5000, what: 'the client tokens' });
    for (const [client, site] of [[acme, home], [acme, home2], [gridco, gridHome]] as const) {
      const s = await client.post('/v1/sessions', { site: { id: site, zip_code: '88801' }, devices: [battery(site, `${site}-bat`)] });
      expect(s.status, JSON.stringify(s.body)).toBe(200);
    }
    await cli((io, env) => portalCommand('branding', ['--integrator', 'acme', '--primary-button-background', '#7b1fa2', '--primary-button-border', '#7b1fa2'], env, io));
    await cli((io, env) => portalCommand('branding', ['--integrator', 'gridco', '--primary-button-background', '#006633', '--primary-button-border', '#006633'], env, io));
    provider = await startTestProvider({
      claim: 'site_id',
      accounts: { alice: { site_id: home }, bob: { site_id: [home, home2] }, dave: { site_id: gridHome } },
      clients: [
        { client_id: 'acme-portal', client_secret: 'acme-secret', origins: [`http://acme.localhost:${port}`] },
        { client_id: 'gridco-portal', client_secret: 'gridco-secret', origins: [`http://gridco.localhost:${port}`] },
      ],
    });
    const secrets = mkdtempSync(join(tmpdir(), 'efs-oidc-'));
    for (const [id, secret] of [['acme', 'acme-secret'], ['gridco', 'gridco-secret']] as const) {
      writeFileSync(join(secrets, id), secret);
      await cli((io, env) => portalOidcCommand('set', ['--integrator', id, '--issuer', provider.issuer, '--client-id', `${id}-portal`, '--client-secret-file', join(secrets, id), '--host', `${id}.localhost`], env, io));
    }
    browser = await launchChromium({ width: 375, height: 800 }, [HOST_RULES]);
    page = await browser.context.newPage();
    page.on('request', async (r) => {
      if (!new URL(r.url()).pathname.startsWith('/v1/')) return;
      const cookie = (await r.allHeaders()).cookie;
      if (cookie) apiCookies.push(cookie);
    });
    page.on('response', async (r) => {
      if (new URL(r.url()).pathname !== '/auth/portal_session' || r.status() !== 200) return;
      bearerExpiries.push(Date.parse(((await r.json()) as { expires_at: string }).expires_at));
    });
  });
  afterAll(async () => {
    await browser?.close();
    await provider?.close();
    await t?.stop();
  });

  it('sends a user without a session through the provider’s login and consent pages and back into the portal, on a cookie the page cannot read', async () => {
    await page.goto(`${acmeUrl()}/`);
    await throughProvider(page, 'alice');
    await page.waitForURL(`${acmeUrl()}/`);
    await page.getByRole('heading', { level: 2, name: 'Your home', exact: true }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Programs for your home' }).waitFor();
    await page.getByRole('link', { name: 'Sign out' }).waitFor();
    const cookies = await browser.context.cookies(acmeUrl());
    const login = cookies.find((c) => c.name === 'efs_portal_login');
    expect(login).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // The integrator's branding: its style sheet, not another integrator's.
    expect(await page.locator('link[rel="stylesheet"][href^="/branding/acme/"]').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'standalone-portal-signed-in.png'), fullPage: true });
  });

  it('changes the site through the same API as the embedded portal, with a bearer and no cookie', async () => {
    await page.getByText('Complete your details to enroll').waitFor();
    await page.getByLabel('First name', { exact: true }).fill('Ada');
    await page.getByLabel('Last name', { exact: true }).fill('Lovelace');
    await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await page.getByLabel('Street address', { exact: true }).fill('1 Battery Lane');
    await page.getByLabel('City', { exact: true }).fill('Gridville');
    await page.getByLabel('State', { exact: true }).selectOption('NM');
    // The portal session the page started with has run out: the save renews it with the cookie.
    await bearersExpired();
    const renewalsBefore = bearerExpiries.length;
    await page.getByRole('button', { name: 'Save your details' }).click();
    await page.getByRole('status').filter({ hasText: 'Your details are saved.' }).waitFor();
    const siteToken = (await acme.post(`/v1/auth/site/${home}`)).body.site_access_token as string;
    const site = await apiClient(t.urls.public, siteToken).get(`/v1/site/${home}`);
    expect(site.body).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', city: 'Gridville', state_code: 'NM' });
    expect(apiCookies).toEqual([]);
    expect(bearerExpiries.length).toBeGreaterThan(renewalsBefore);
  });

  it('fits 375 and 320 px without scrolling sideways, and axe-core finds no serious or critical violation', async () => {
    for (const width of [375, 320]) {
      await page.setViewportSize({ width, height: 800 });
      const { scrollWidth, clientWidth } = await horizontalOverflow(page.mainFrame());
      expect(scrollWidth, `${width} px`).toBeLessThanOrEqual(clientWidth);
    }
    const serious = (await axeViolations(page.mainFrame())).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'standalone-portal-320.png'), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
  });

  it('never shows one integrator’s user or branding on another’s host name', async () => {
    // Alice is still signed in at the provider; at Gridco's portal her home is not Gridco's.
    await page.goto(`${gridUrl()}/`);
    await throughProvider(page, 'alice');
    await page.getByRole('heading', { level: 2, name: 'Your home is not known here' }).waitFor();
    expect(await page.locator('link[rel="stylesheet"][href^="/branding/gridco/"]').count()).toBe(1);
    expect(await page.locator('link[rel="stylesheet"][href^="/branding/acme/"]').count()).toBe(0);
    expect(await page.content()).not.toContain(home);
    const serious = (await axeViolations(page.mainFrame())).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
    // Gridco's own user, in another browser, sees Gridco's home, and Acme's portal still has Alice.
    const other = await launchChromium({ width: 375, height: 800 }, [HOST_RULES]);
    try {
      const p = await other.context.newPage();
      await p.goto(`${gridUrl()}/`);
      await throughProvider(p, 'dave');
      await p.waitForURL(`${gridUrl()}/`);
      await p.getByRole('heading', { level: 2, name: 'Your home', exact: true }).waitFor();
      expect(await p.locator('link[rel="stylesheet"][href^="/branding/gridco/"]').count()).toBe(1);
      expect((await other.context.cookies(acmeUrl())).length).toBe(0);
    } finally {
      await other.close();
    }
    await page.goto(`${acmeUrl()}/`);
    await page.getByRole('heading', { level: 2, name: 'Your home', exact: true }).waitFor();
  });

  it('logs out on the server and at the provider, and a new sign-in asks for the password again', async () => {
    await page.getByRole('link', { name: 'Sign out' }).click();
    // The provider's own logout confirmation (RP-initiated logout), then back to the portal.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${acmeUrl()}/auth/logout`);
    await page.getByRole('heading', { level: 2, name: 'You have signed out' }).waitFor();
    expect((await browser.context.cookies(acmeUrl())).find((c) => c.name === 'efs_portal_login')).toBeUndefined();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.href.startsWith(provider.issuer));
    await page.locator('input[name="login"]').waitFor();
  });

  it('lets a user with several homes choose one', async () => {
    await throughProvider(page, 'bob');
    await page.waitForURL(`${acmeUrl()}/`);
    await page.getByRole('heading', { level: 2, name: 'Choose a home' }).waitFor();
    await page.getByRole('button', { name: `Home ${home2}` }).click();
    await page.getByRole('heading', { level: 2, name: 'Your home', exact: true }).waitFor();
    const serious = (await axeViolations(page.mainFrame())).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
  });

  it('says so when the user cancels at the provider, with a way to start again', async () => {
    await page.getByRole('link', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${acmeUrl()}/auth/logout`);
    await page.goto(`${acmeUrl()}/`);
    await page.waitForURL((u) => u.href.startsWith(provider.issuer));
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${acmeUrl()}/auth/oidc/callback`));
    await page.getByRole('heading', { level: 2, name: 'Sign-in cancelled' }).waitFor();
    await page.getByRole('link', { name: 'Sign in again' }).waitFor();
    const serious = (await axeViolations(page.mainFrame())).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'standalone-portal-cancelled.png'), fullPage: true });
  });

  it('closes an open portal whose login ended on the server, and offers to sign in again', async () => {
    await page.goto(`${acmeUrl()}/`);
    await throughProvider(page, 'alice');
    await page.waitForURL(`${acmeUrl()}/`);
    await page.getByRole('heading', { level: 2, name: 'Your home', exact: true }).waitFor();
    // Logged out in another tab: the login ends on the server at once.
    const other = await browser.context.newPage();
    await other.goto(`${acmeUrl()}/auth/logout`);
    await other.close();
    await bearersExpired();
    // The page's next read (its refresh interval at the latest) finds the session ended and cannot renew it.
    await page.getByRole('heading', { level: 2, name: 'Your session has ended' }).waitFor({ timeout: REFRESH_INTERVAL_MS + 10_000 });
    await page.getByRole('link', { name: 'Sign in again' }).waitFor();
  }, 60_000);
});
