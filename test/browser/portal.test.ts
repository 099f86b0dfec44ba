/**
 * The embedded portal as an end user meets it: inside an iframe of an integrator's app on another
 * site, in Debian's Chromium with third-party cookies blocked. The portal completes the site,
 * enrolls (through terms that try to run script), shows the utility's decision, handles events,
 * refuses a used link and a foreign framer, fits a phone and passes axe-core. While open it keeps
 * current: a utility's new event and decision show without a reload, and coming back to it refreshes.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Frame, Page } from 'playwright-core';
import { credentialCommand, portalCommand } from '@efs/cli';
import { apiClient, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { allRoutes } from '../../services/gateway/src/routes/index.ts';
import { REFRESH_INTERVAL_MS } from '../../portal/src/queryClient.ts';
import { battery, fullSite, uid } from '../commissioningHelpers.ts';
import { startTestSystem, type TestSystem } from '../harness/system.ts';
import { axeViolations, horizontalOverflow, launchChromium, startHostSite, type Browser, type HostSite } from './chromium.ts';

const run = await tierAvailable('browser');
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '.run', 'screenshots');
const eventsApi = allRoutes.some((r) => r.method === 'GET' && r.url === '/v1/site/:siteId/events');

/** Terms a careless or malicious utility could write: each line tries to run script somehow. */
const HOSTILE_TERMS = [
  '# Hostile terms',
  '',
  'Plain **bold** text and a [safe link](https://example.com/terms).',
  '',
  '<script>window.__pwned = "script"</script>',
  '<img src="x" onerror="window.__pwned = \'img\'">',
  '<svg onload="window.__pwned = \'svg\'"><circle r="1"/></svg>',
  '<a href="javascript:window.__pwned=\'link\'">Click for savings</a>',
  '[markdown link](javascript:window.__pwned=\'md\')',
  '<a href="JaVaScRiPt&colon;window.__pwned=1">encoded</a>',
  '<iframe srcdoc="<script>parent.__pwned=\'iframe\'</script>"></iframe>',
  '<form action="javascript:window.__pwned=\'form\'"><button>Go</button></form>',
  '<div style="background:url(javascript:alert(1))" onclick="window.__pwned=\'click\'">Styled box</div>',
  '<details open ontoggle="window.__pwned=\'toggle\'"><summary>More</summary></details>',
  '<object data="javascript:window.__pwned=\'object\'"></object>',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=\'mxss\'"></style></mglyph></table></mtext></math>',
  '',
  '## Harmless heading',
  '',
  '1. You stay enrolled for at least **12 months**.',
].join('\n');

describe.runIf(run)('the embedded portal in Chromium, framed by another site with third-party cookies blocked', () => {
  let t: TestSystem;
  let acme: ApiClient;
  let acmeTokenId: string;
  let host: HostSite;
  let rogue: HostSite;
  let browser: Browser;
  let page: Page;
  let portalUrl: string;
  let hostileProgramId: string;
  const siteId = uid('home');
  const dialogs: string[] = [];
  const cookieHeaders: string[] = [];
  /** A second site, whose portal stays open while the utility acts; when its portal read its events. */
  const liveSiteId = uid('live');
  const liveEventReads: number[] = [];
  const setCookies: string[] = [];

  /** The command-line tool against the running system's database, as an operator runs it. */
  const cli = async (command: (io: { out(l: string): void }, env: Record<string, string>) => Promise<number>) => {
    const out: string[] = [];
    const code = await command({ out: (l) => out.push(l) }, { DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' });
    expect(code, out.join('\n')).toBe(0);
    return out.join('\n');
  };
  const portalCli = (sub: string, args: string[]) => cli((io, env) => portalCommand(sub, args, env, io));

  const newSession = async () => {
    const s = await acme.post('/v1/sessions', { site: { id: siteId, zip_code: '88801' }, devices: [battery(siteId, `${siteId}-bat`)] });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    return s.body.portal_url as string;
  };

  /** The portal's frame once its page has started. */
  const portalFrame = async (): Promise<Frame> => {
    let frame: Frame | undefined;
    await waitFor(async () => (frame = page.frames().find((f) => f.url().startsWith(t.urls.portal))) !== undefined, { timeoutMs: 10_000, what: 'the portal frame' });
    await frame!.getByRole('heading', { level: 1, name: 'Energy programs' }).waitFor();
    return frame!;
  };

  beforeAll(async () => {
    t = await startTestSystem();
    const created = await cli((io, env) => credentialCommand('client-token', 'create', ['--integrator', 'acme', '--name', 'Acme Energy'], env, io));
    acme = apiClient(t.urls.public, /token: (efs_ct_\S+)/.exec(created)![1]);
    acmeTokenId = /id: (\S+)/.exec(created)![1]!;
    await waitFor(async () => (await acme.get('/v1/sites')).status === 200, { timeoutMs: 5000, what: "acme's client token" });
    host = await startHostSite('127.0.0.2');
    rogue = await startHostSite('127.0.0.3');
    await portalCli('frame-ancestors', ['--integrator', 'acme', host.origin]);
    await portalCli('branding', ['--integrator', 'acme', '--logo-url', `${host.origin}/logo.svg`, '--primary-button-background', '#7b1fa2', '--primary-button-border', '#7b1fa2', '--font-family', 'Acme Sans, sans-serif']);
    const program = await t.utility.post('/v1/programs', {
      name: 'Hostile Terms Program',
      description: 'A program whose utility wrote hostile terms.',
      eligible_device_types: ['BATTERY'],
      zip_codes: ['88801'],
      minimum_reserve_percentage: 25,
      minimum_commitment_months: 12,
      participation_months: [6, 7, 8],
      rates: { upfront_per_kwh: 10, upfront_per_device: 0, yearly_per_kw: 30, yearly_per_device: 0 },
      enrollment_form: [{ name: 'meter_id', label: 'Meter number', type: 'string', hint: 'On your **meter**. <img src=x onerror="window.__pwned=\'hint\'">' }],
      terms_and_conditions_text: HOSTILE_TERMS,
    });
    expect(program.status, JSON.stringify(program.body)).toBe(200);
    hostileProgramId = program.body.id;
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', async (r) => {
      if (!r.url().startsWith(t.urls.portal)) return;
      const cookie = (await r.allHeaders()).cookie;
      if (cookie) cookieHeaders.push(cookie);
    });
    page.on('request', (r) => {
      if (r.method() === 'GET' && new URL(r.url()).pathname === `/v1/site/${liveSiteId}/events`) liveEventReads.push(Date.now());
    });
    page.on('response', async (r) => {
      if (!r.url().startsWith(t.urls.portal)) return;
      const set = (await r.allHeaders())['set-cookie'];
      if (set) setCookies.push(set);
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
    portalUrl = await newSession();
  });

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await rogue?.close();
    await t?.stop();
  });

  it('opens in the host page with the integrator’s branding, and never uses a cookie', async () => {
    await page.goto(host.pageFraming(portalUrl));
    const frame = await portalFrame();
    await frame.getByRole('heading', { name: 'Your home', exact: true }).waitFor();
    // Cookies are unavailable to the cross-site frame (the profile blocks third-party cookies, and a
    // cross-site frame on plain http could not keep one anyway): the portal's frame cannot even set one.
    const stored = await frame.evaluate(() => {
      document.cookie = 'efs_probe=1; SameSite=None; Secure; Path=/';
      return document.cookie;
    });
    expect(stored).toBe('');
    const logo = frame.getByRole('img', { name: 'Acme Energy' });
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    const button = frame.getByRole('button', { name: 'Save your details' });
    expect(await button.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(123, 31, 162)');
    expect(await frame.evaluate(() => getComputedStyle(document.body).fontFamily)).toMatch(/^"Acme Sans", /);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-site-form.png') });
    const serious = (await axeViolations(frame)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
  });

  it('shows the eligible programs with earnings, active months and minimum commitment', async () => {
    const frame = await portalFrame();
    const capacity = frame.getByRole('article', { name: 'Sandbox Battery Capacity' });
    await capacity.waitFor();
    const facts = await capacity.locator('dl').innerText();
    expect(facts).toMatch(/Upfront earnings\s+\$\d/);
    expect(facts).toMatch(/Yearly earnings\s+\$\d/);
    expect(facts).toMatch(/Active months\s+May to October/);
    expect(facts).toMatch(/Minimum commitment\s+12 months/);
    const hostile = frame.getByRole('article', { name: 'Hostile Terms Program' });
    expect(await hostile.locator('dl').innerText()).toMatch(/Active months\s+June to August/);
    await expect.poll(() => frame.getByRole('article', { name: 'Sandbox EV Smart Charging' }).count()).toBe(0);
  });

  it('completes the missing site information through labelled inputs', async () => {
    const frame = await portalFrame();
    await frame.getByText('Complete your details to enroll').waitFor();
    await frame.getByLabel('First name', { exact: true }).fill('Ada');
    await frame.getByLabel('Last name', { exact: true }).fill('Lovelace');
    await frame.getByLabel('Email', { exact: true }).fill('not-an-email');
    await frame.getByLabel('Street address', { exact: true }).fill('1 Battery Lane');
    await frame.getByLabel('City', { exact: true }).fill('Gridville');
    await frame.getByLabel('State', { exact: true }).selectOption('NM');
    expect(await frame.getByLabel('ZIP code', { exact: true }).inputValue()).toBe('88801');
    await frame.getByRole('button', { name: 'Save your details' }).click();
    // The service's own validation comes back next to the field it concerns.
    await frame.getByRole('alert').filter({ hasText: 'could not be saved' }).waitFor();
    expect(await frame.getByLabel('Email', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await frame.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await frame.getByRole('button', { name: 'Save your details' }).click();
    await frame.getByRole('status').filter({ hasText: 'Your details are saved.' }).waitFor();
    await frame.getByRole('button', { name: 'Edit your details' }).waitFor();
    const site = await apiClient(t.urls.public, await siteToken()).get(`/v1/site/${siteId}`);
    expect(site.body).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', street_address: '1 Battery Lane', city: 'Gridville', state_code: 'NM', zip_code: '88801' });
  });

  const siteToken = async () => (await acme.post(`/v1/auth/site/${siteId}`)).body.site_access_token as string;

  it('renders hostile terms without running anything, and enrolls with the program’s form', async () => {
    const frame = await portalFrame();
    const card = frame.getByRole('article', { name: 'Hostile Terms Program' });
    await card.getByRole('button', { name: 'Enroll in Hostile Terms Program' }).click();
    const terms = card.getByRole('region', { name: 'Terms and conditions of Hostile Terms Program' });
    await terms.waitFor();
    expect(await terms.innerText()).toContain('You stay enrolled for at least 12 months.');
    expect(await terms.getByRole('heading', { name: 'Harmless heading' }).evaluate((h) => h.tagName)).toBe('H6');
    const safe = terms.getByRole('link', { name: 'safe link' });
    expect(await safe.getAttribute('href')).toBe('https://example.com/terms');
    expect(await safe.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    // Nothing executable survived: no script-bearing element, no handler, no javascript: URL.
    const leftovers = await card.evaluate((el) => {
      const all = [...el.querySelectorAll('.terms *, .hint *')];
      return {
        elements: all.filter((n) => ['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'FORM', 'STYLE', 'SVG', 'MATH', 'IMG', 'DETAILS'].includes(n.tagName.toUpperCase())).map((n) => n.tagName),
        handlers: all.flatMap((n) => [...n.attributes].filter((a) => a.name.startsWith('on') || a.name === 'style' || a.name === 'srcdoc').map((a) => `${n.tagName}[${a.name}]`)),
        urls: all.flatMap((n) => ['href', 'src', 'action', 'data'].map((a) => n.getAttribute(a) ?? '')).filter((u) => /^\s*(javascript|data|vbscript)/i.test(u)),
      };
    });
    expect(leftovers).toEqual({ elements: [], handlers: [], urls: [] });
    // Activating what looks like a link runs nothing either.
    for (const name of ['Click for savings', 'markdown link', 'encoded', 'Styled box', 'More']) {
      const text = terms.getByText(name, { exact: true });
      if ((await text.count()) > 0) await text.first().click();
    }

    await card.getByLabel('Meter number').fill('MTR-42');
    await card.getByRole('button', { name: /^Enroll$/ }).click();
    await card.getByRole('alert').filter({ hasText: 'Some answers are missing.' }).waitFor();
    await card.getByRole('checkbox', { name: 'I have read and agree to the terms and conditions' }).check();
    await card.getByRole('button', { name: /^Enroll$/ }).press('Enter');
    await frame.getByRole('status').filter({ hasText: 'You asked to join Hostile Terms Program.' }).waitFor();
    const enrollment = frame.getByRole('article', { name: 'Hostile Terms Program' }).filter({ hasText: 'Status:' });
    await enrollment.getByText('Waiting for approval').waitFor();

    expect(await frame.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned ?? null)).toBeNull();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned ?? null)).toBeNull();
    expect(dialogs).toEqual([]);
    const stored = (await t.utility.get(`/v1/enrollments?program_id=${hostileProgramId}`)).body as { site_id: string; program_specific_attributes: unknown; has_agreed_to_terms_and_conditions: boolean }[];
    expect(stored.filter((e) => e.site_id === siteId)).toEqual([
      expect.objectContaining({ program_specific_attributes: [{ name: 'meter_id', value: 'MTR-42' }], has_agreed_to_terms_and_conditions: true }),
    ]);
  });

  it('shows the utility’s decision with its reason, and the minimum commitment when unenrolling too early', async () => {
    const frame = await portalFrame();
    const id = ((await t.utility.get(`/v1/enrollments?program_id=${hostileProgramId}`)).body as { id: string; site_id: string }[]).find((e) => e.site_id === siteId)!.id;
    const approved = await t.utility.patch(`/v1/enrollments/${id}`, { status: 'ACTIVE', status_reason: 'Meter verified by the utility' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const enrollment = frame.getByRole('article', { name: 'Hostile Terms Program' }).filter({ hasText: 'Status:' });
    await enrollment.getByText('Enrolled', { exact: true }).waitFor({ timeout: 20_000 });
    await enrollment.getByText('Reason: Meter verified by the utility').waitFor();
    await enrollment.getByRole('button', { name: 'Unenroll from Hostile Terms Program' }).click();
    await enrollment.getByText(/minimum commitment of 12 months/).first().waitFor();
    await enrollment.getByRole('button', { name: 'Yes, unenroll' }).click();
    const refusal = enrollment.getByRole('alert');
    await refusal.waitFor();
    const nextYear = new Date(Date.now() + 365 * 86400_000).getFullYear();
    expect(await refusal.innerText()).toMatch(new RegExp(`You cannot unenroll yet: Hostile Terms Program has a minimum commitment of 12 months\\. You can unenroll from \\w+ \\d+, (${nextYear}|${nextYear + 1})\\.`));
    await enrollment.getByRole('button', { name: 'Keep it' }).click();
  });

  it('fits 375 and 320 px without scrolling sideways, and axe-core finds no serious or critical violation', async () => {
    const frame = await portalFrame();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-enrolled.png') });
    // Open an enrollment form with terms, so that the check covers the form controls too.
    await frame.getByRole('button', { name: 'Enroll in Sandbox Battery Capacity' }).click();
    await frame.getByRole('region', { name: 'Terms and conditions of Sandbox Battery Capacity' }).waitFor();
    for (const width of [375, 320]) {
      await page.setViewportSize({ width, height: 800 });
      await expect.poll(() => frame.evaluate(() => document.documentElement.clientWidth)).toBe(width);
      const o = await horizontalOverflow(frame);
      expect(o.scrollWidth, `portal at ${width} px`).toBeLessThanOrEqual(o.clientWidth);
      const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(pageWidth, `host page at ${width} px`).toBeLessThanOrEqual(width);
    }
    await page.setViewportSize({ width: 375, height: 800 });
    await frame.locator('body').evaluate(() => document.getElementById('programs-title')?.scrollIntoView());
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-programs.png') });
    await frame.getByRole('region', { name: 'Terms and conditions of Sandbox Battery Capacity' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-enroll.png') });
    const serious = (await axeViolations(frame)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
  });

  it('reaches every control with the keyboard, in order', async () => {
    const frame = await portalFrame();
    const controls = await frame.evaluate(() => {
      const sel = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, summary, [tabindex="0"]';
      const visible = [...document.querySelectorAll<HTMLElement>(sel)].filter((el) => el.getClientRects().length > 0 && !(el instanceof HTMLInputElement && el.type === 'radio' && !el.checked && document.querySelector(`input[name="${el.name}"]:checked`)));
      visible.forEach((el, i) => el.setAttribute('data-kb', String(i)));
      return visible.length;
    });
    expect(controls).toBeGreaterThan(5);
    await frame.locator('h1').evaluate((h: HTMLElement) => {
      h.tabIndex = -1;
      h.focus();
    });
    const reached = new Set<string>();
    for (let i = 0; i < controls + 5; i++) {
      await page.keyboard.press('Tab');
      const kb = await frame.evaluate(() => document.activeElement?.getAttribute('data-kb') ?? null);
      if (kb !== null) reached.add(kb);
    }
    expect(reached.size).toBe(controls);
  });

  it('refuses the same link a second time with a clear page', async () => {
    await page.reload();
    const frame = await portalFrame();
    await frame.getByRole('heading', { name: 'This link can’t be used' }).waitFor();
    expect(await frame.locator('main').innerText()).toContain('already been used');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-used-link.png') });
  });

  it('cannot be framed by another origin (frame-ancestors), and that attempt leaves the link unused', async () => {
    const url = await newSession();
    const refused = page.waitForEvent('console', { predicate: (m) => /frame-ancestors/.test(m.text()), timeout: 10_000 }).catch(() => undefined);
    await page.goto(rogue.pageFraming(url));
    await refused;
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    expect(frame.url().startsWith(t.urls.portal)).toBe(false);
    expect(await frame.getByRole('heading', { name: 'Energy programs' }).count()).toBe(0);
    const token = new URL(url).searchParams.get('token');
    const r = await fetch(`${t.urls.portal}/auth/session_token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(r.status).toBe(200);
  });

  it(eventsApi ? 'shows an event and opts out of it' : 'says plainly that events are not available yet', async () => {
    await page.goto(host.pageFraming(await newSession()));
    const frame = await portalFrame();
    const events = frame.getByRole('region', { name: 'Events' });
    if (!eventsApi) {
      await events.getByText('Events are not available on this service yet.').waitFor();
      return;
    }
    await events.getByText('No events yet.').waitFor();
    const starts = new Date(Date.now() + 3600_000).toISOString();
    const created = await t.utility.post('/v1/events', { program_id: hostileProgramId, target_type: 'SITE', target_ids: [siteId], actions: [{ starts_at: starts, duration_s: 3600, mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 3000 }] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // The link is spent: the app opens the portal again with a new one.
    await page.goto(host.pageFraming(await newSession()));
    const reloaded = await portalFrame();
    const card = reloaded.getByRole('article', { name: /Hostile Terms Program:/ });
    await card.getByText('You take part').waitFor();
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375-event.png') });
    const serious = (await axeViolations(reloaded)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
    await card.getByLabel('Battery reserve for this event (%)').fill('40');
    await card.getByRole('button', { name: 'Save reserve' }).click();
    await reloaded.getByRole('status').filter({ hasText: 'keeps at least 40 %' }).waitFor();
    await card.getByRole('button', { name: 'Opt out of this event' }).click();
    await card.getByText('You opted out').waitFor();
    const seen = await apiClient(t.urls.public, await siteToken()).get(`/v1/site/${siteId}/event/${created.body.id}`);
    expect(seen.body).toMatchObject({ is_participating: false });
  });

  it('works opened directly, as in a WebView, at 320 px', async () => {
    await page.setViewportSize({ width: 320, height: 700 });
    await page.goto(await newSession());
    await page.getByRole('heading', { name: 'Your enrollments' }).waitFor();
    await page.getByRole('article', { name: 'Hostile Terms Program' }).filter({ hasText: 'Status:' }).getByText('Enrolled', { exact: true }).waitFor();
    const o = await horizontalOverflow(page.mainFrame());
    expect(o.scrollWidth).toBeLessThanOrEqual(o.clientWidth);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-320-webview.png'), fullPage: true });
  });

  /** A site whose enrollment waits for its utility, with its portal open in the host page. */
  const openLivePortal = async () => {
    const zip = '88802';
    const program = await t.utility.post('/v1/programs', { name: 'Live Update Program', eligible_device_types: ['BATTERY'], zip_codes: [zip] });
    expect(program.status, JSON.stringify(program.body)).toBe(200);
    const session = await acme.post('/v1/sessions', { site: fullSite(liveSiteId, { zip_code: zip }), devices: [battery(liveSiteId, `${liveSiteId}-bat`)] });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const asSite = apiClient(t.urls.public, (await acme.post(`/v1/auth/site/${liveSiteId}`)).body.site_access_token as string);
    const enrollment = await waitFor(
      async () => {
        const r = await asSite.post(`/v1/site/${liveSiteId}/enrollments`, { program_id: program.body.id, device_ids: [`${liveSiteId}-bat`] });
        return r.status === 200 ? (r.body as { id: string; status: string }) : undefined;
      },
      { what: 'the new program reaching enrollment' },
    );
    expect(enrollment.status).toBe('PENDING');
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(host.pageFraming(session.body.portal_url as string));
    return { programId: program.body.id as string, enrollmentId: enrollment.id, frame: await portalFrame() };
  };
  const createLiveEvent = async (programId: string, hoursAhead: number) => {
    const starts = new Date(Date.now() + hoursAhead * 3600_000).toISOString();
    const body = { program_id: programId, target_type: 'SITE', target_ids: [liveSiteId], actions: [{ starts_at: starts, duration_s: 3600, mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 3000 }] };
    // The approval reaches event dispatch asynchronously: until then the site has no ACTIVE enrollment there (409).
    await waitFor(
      async () => {
        const created = await t.utility.post('/v1/events', body);
        if (created.status !== 409) expect(created.status, JSON.stringify(created.body)).toBe(200);
        return created.status === 200;
      },
      { timeoutMs: 10_000, what: 'the event for the approved site' },
    );
  };
  let live: Awaited<ReturnType<typeof openLivePortal>> | undefined;

  it.runIf(eventsApi)('shows a new event and the utility’s decision while open, within its refresh interval and without a reload', async () => {
    live = await openLivePortal();
    const { frame } = live;
    const enrollment = frame.getByRole('article', { name: 'Live Update Program' }).filter({ hasText: 'Status:' });
    await enrollment.getByText('Waiting for approval').waitFor();
    const events = frame.getByRole('region', { name: 'Events' });
    await events.getByText('No events yet.').waitFor();
    // The document the user has open: a reload or another navigation would replace it, and this with it.
    await frame.evaluate(() => ((window as unknown as { __stillOpen?: boolean }).__stillOpen = true));

    const approved = await t.utility.patch(`/v1/enrollments/${live.enrollmentId}`, { status: 'ACTIVE', status_reason: 'Approved while you looked' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await createLiveEvent(live.programId, 1);
    // Nobody touches the page: only its own refresh can bring these (a few seconds for the reads and the rendering).
    const deadline = Date.now() + REFRESH_INTERVAL_MS + 5_000;
    const left = () => ({ timeout: Math.max(1, deadline - Date.now()) });
    await enrollment.getByText('Enrolled', { exact: true }).waitFor(left());
    await enrollment.getByText('Reason: Approved while you looked').waitFor(left());
    const card = events.getByRole('article', { name: /Live Update Program:/ });
    await card.getByText('You take part').waitFor(left());
    await card.getByRole('button', { name: 'Opt out of this event' }).waitFor(left());
    expect(await events.getByText('No events yet.').count()).toBe(0);
    expect(await frame.evaluate(() => (window as unknown as { __stillOpen?: boolean }).__stillOpen)).toBe(true);
  });

  it.runIf(eventsApi)('reads again at once when the user comes back to it from the host app', async () => {
    const { frame, programId } = live!;
    const events = frame.getByRole('region', { name: 'Events' });
    const cards = events.getByRole('article', { name: /Live Update Program:/ });
    expect(await cards.count()).toBe(1);
    // The user is in the portal (its window has the focus: it reads again)…
    const before = liveEventReads.length;
    await frame.getByRole('heading', { name: 'Your enrollments' }).click();
    await waitFor(async () => liveEventReads.length > before, { timeoutMs: 5000, what: 'the read on getting the focus' });
    // …turns to the host app, where the utility's new event cannot show…
    await page.mainFrame().evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    expect(await frame.evaluate(() => document.hasFocus())).toBe(false);
    await createLiveEvent(programId, 2);
    const lastRead = liveEventReads.at(-1)!;
    const seen = liveEventReads.length;
    // …and comes back to the portal, which shows it at once.
    await frame.getByRole('heading', { name: 'Events', exact: true }).click();
    await expect.poll(() => cards.count(), { timeout: 5000 }).toBe(2);
    expect(liveEventReads.length).toBeGreaterThan(seen);
    // Sooner than the refresh interval could have (it counts from the last read): the focus did it.
    expect(liveEventReads[seen]! - lastRead).toBeLessThan(REFRESH_INTERVAL_MS);
    expect(await frame.evaluate(() => (window as unknown as { __stillOpen?: boolean }).__stillOpen)).toBe(true);
    const serious = (await axeViolations(frame)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
  });

  it('ends an open portal when the integrator’s client token is revoked, and says so', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(host.pageFraming(await newSession()));
    const frame = await portalFrame();
    await frame.getByRole('button', { name: 'Edit your details' }).click();
    await cli((io, env) => credentialCommand('client-token', 'revoke', [acmeTokenId], env, io));
    await waitFor(async () => (await acme.get('/v1/sites')).status === 401, { timeoutMs: 5000, what: 'the revocation at the gateway' });
    // The page's next call is refused: it says the session ended instead of failing obscurely.
    await frame.getByLabel('City', { exact: true }).fill('New Gridville');
    await frame.getByRole('button', { name: 'Save your details' }).click();
    await frame.getByRole('heading', { name: 'Your session has ended' }).waitFor();
  });

  it('never sent or received a cookie on the portal’s origin', () => {
    expect(cookieHeaders).toEqual([]);
    expect(setCookies).toEqual([]);
  });
});
