/**
 * The portal listener over real sockets (gateway in front of stub services): who may frame the
 * page (integrators' origins set with the CLI, the sandbox's from SANDBOX_PORTAL_FRAME_ANCESTORS),
 * branding applied without a rebuild or restart, a refused link, the site's API for portal
 * sessions only, and the built assets. The browser tier shows the same in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalCommand } from '@efs/cli';
import { apiClient, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, tierAvailable, type ApiClient } from '@efs/testing';
import { parseGatewayConfig } from '../services/gateway/src/config.ts';
import {
  probeRoutes,
  redeemPortalSession,
  SANDBOX_INTEGRATOR,
  startGatewayWithStubs,
  tokenOfPortalUrl,
  type StubbedGateway,
} from '../services/gateway/test/harness.ts';

const run = await tierAvailable('postgres');

const cspOf = (r: Response) => (r.headers.get('content-security-policy') ?? '').split('; ');
const frameAncestorsOf = (r: Response) => cspOf(r).find((d) => d.startsWith('frame-ancestors'));
const html = { accept: 'text/html,application/xhtml+xml' };

describe.runIf(run)('the portal listener', () => {
  let h: StubbedGateway;
  let acme: ApiClient;
  let framedSandbox: StubbedGateway;

  const cli = async (sub: string, args: string[]) => {
    const out: string[] = [];
    const code = await portalCommand(sub, args, { DATABASE_URL: h.database.url, LOG_LEVEL: 'silent' }, { out: (l) => out.push(l) }).catch((err: Error) => {
      out.push(err.message);
      return 1;
    });
    return { code, text: out.join('\n') };
  };
  /** The page of a new session of the integrator: GET as a browser loads it. */
  const openPortal = async (client: ApiClient, gw: StubbedGateway = h, site = 'site-p') => {
    const s = await client.post('/v1/sessions', { site: { id: site } });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    return { token: s.body.token as string, page: await fetch(`${gw.urls.portal}/auth/session_token?token=${tokenOfPortalUrl(s.body.portal_url)}`, { headers: html }) };
  };

  beforeAll(async () => {
    h = await startGatewayWithStubs({ routes: probeRoutes() });
    await h.store.ensureIntegrator('acme', 'Acme Energy');
    const token = await h.store.createClientToken('acme', 'portal test');
    await h.gateway.flushCredentials();
    acme = apiClient(h.urls.public, token.token);
    framedSandbox = await startGatewayWithStubs({ routes: probeRoutes(), env: { SANDBOX_PORTAL_FRAME_ANCESTORS: 'https://sandbox-app.example.test  http://localhost:3000' } });
  });
  afterAll(async () => {
    await h?.stop();
    await framedSandbox?.stop();
  });

  it('lets any origin frame the sandbox integrator’s portal while SANDBOX_PORTAL_FRAME_ANCESTORS is unset, only its origins once set', async () => {
    const open = await openPortal(h.api);
    expect(open.page.status).toBe(200);
    expect(frameAncestorsOf(open.page)).toBeUndefined();
    const framed = await openPortal(framedSandbox.api, framedSandbox);
    expect(framed.page.status).toBe(200);
    expect(frameAncestorsOf(framed.page)).toBe('frame-ancestors https://sandbox-app.example.test http://localhost:3000');
    // The page's own policy: nothing but its own scripts, styles and API.
    expect(cspOf(open.page)).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "base-uri 'none'"]));
  });

  it('refuses a bad SANDBOX_PORTAL_FRAME_ANCESTORS at start', () => {
    const sealed = { SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY };
    expect(() => parseGatewayConfig({ ...sealed, SANDBOX_PORTAL_FRAME_ANCESTORS: "https://ok.example.test 'unsafe-inline'" })).toThrow(/SANDBOX_PORTAL_FRAME_ANCESTORS/);
    expect(parseGatewayConfig({ ...sealed, SANDBOX_PORTAL_FRAME_ANCESTORS: '' }).SANDBOX_PORTAL_FRAME_ANCESTORS).toBeUndefined();
  });

  it('lets no page frame an integrator’s portal until its origins are set with the CLI, then only those, without a restart', async () => {
    expect(frameAncestorsOf((await openPortal(acme)).page)).toBe("frame-ancestors 'none'");
    expect(await cli('frame-ancestors', ['--integrator', 'acme', 'https://app.acme.example', 'https://*.acme.example'])).toEqual({ code: 0, text: 'acme: frame-ancestors https://app.acme.example https://*.acme.example' });
    expect(frameAncestorsOf((await openPortal(acme)).page)).toBe('frame-ancestors https://app.acme.example https://*.acme.example');
    expect(await cli('frame-ancestors', ['--integrator', 'acme'])).toEqual({ code: 0, text: 'acme: frame-ancestors https://app.acme.example https://*.acme.example' });
    expect((await cli('frame-ancestors', ['--integrator', 'acme', '--none'])).code).toBe(0);
    expect(frameAncestorsOf((await openPortal(acme)).page)).toBe("frame-ancestors 'none'");
    await cli('frame-ancestors', ['--integrator', 'acme', 'https://app.acme.example']);
  });

  it('the CLI checks everything before it writes', async () => {
    expect(await cli('frame-ancestors', ['--integrator', 'acme', 'https://ok.example', 'https://evil.example; script-src *'])).toMatchObject({ code: 1, text: expect.stringContaining('is not an origin') });
    expect(await cli('frame-ancestors', ['--integrator', 'nobody', 'https://ok.example'])).toMatchObject({ code: 1, text: expect.stringContaining('unknown integrator nobody') });
    expect(await cli('frame-ancestors', ['--integrator', SANDBOX_INTEGRATOR, 'https://ok.example'])).toMatchObject({ code: 1, text: expect.stringContaining('SANDBOX_PORTAL_FRAME_ANCESTORS') });
    expect(await cli('branding', ['--integrator', 'acme', '--primary-button-background', 'red'])).toMatchObject({ code: 1, text: expect.stringContaining('--primary-button-background') });
    expect(await cli('branding', ['--integrator', 'acme', '--logo-url', 'javascript:alert(1)'])).toMatchObject({ code: 1, text: expect.stringContaining('--logo-url') });
    expect(await cli('branding', ['--integrator', 'acme', '--colour', '#fff'])).toMatchObject({ code: 1 });
    expect(frameAncestorsOf((await openPortal(acme)).page)).toBe('frame-ancestors https://app.acme.example');
  });

  it('applies branding set with the CLI at the next page, as a style sheet of CSS custom properties, and its images in the policy', async () => {
    const before = await openPortal(acme);
    expect(await before.page.text()).not.toContain('/branding/');
    const set = await cli('branding', ['--integrator', 'acme', '--primary-button-background', '#7b1fa2', '--text-color', '#111111', '--logo-url', 'https://cdn.acme.example/logo.svg', '--favicon-url', 'https://cdn.acme.example/favicon.ico']);
    expect(set.code, set.text).toBe(0);
    expect(JSON.parse(set.text)).toEqual({ primary_button_background: '#7b1fa2', text_color: '#111111', logo_url: 'https://cdn.acme.example/logo.svg', favicon_url: 'https://cdn.acme.example/favicon.ico' });
    const after = await openPortal(acme);
    const text = await after.page.text();
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(text.slice(text.lastIndexOf('/assets/')))?.[1];
    expect(href).toMatch(/^\/branding\/acme\/theme\.css\?v=/);
    expect(text).toContain('<link rel="icon" href="https://cdn.acme.example/favicon.ico">');
    expect(text).toContain('"logo_url":"https://cdn.acme.example/logo.svg"');
    expect(cspOf(after.page)).toContain("img-src 'self' https://cdn.acme.example data:");
    const css = await fetch(`${h.urls.portal}${href}`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toBe(':root {\n  --efs-primary-bg: #7b1fa2;\n  --efs-text: #111111;\n}\n');
    // An empty value removes a field; the address of the style sheet changes with its content.
    await cli('branding', ['--integrator', 'acme', '--text-color', '']);
    const changed = await (await openPortal(acme)).page.text();
    const href2 = /href="(\/branding\/acme\/theme\.css\?v=[^"]+)"/.exec(changed)![1];
    expect(href2).not.toBe(href);
    expect(await (await fetch(`${h.urls.portal}${href2}`)).text()).toBe(':root {\n  --efs-primary-bg: #7b1fa2;\n}\n');
    expect((await cli('branding', ['--integrator', 'acme', '--reset'])).text).toBe('{}');
    // An unknown integrator's style sheet is the same as one without branding: it never says whether the id exists.
    const reset = await fetch(`${h.urls.portal}/branding/acme/theme.css`);
    const unknown = await fetch(`${h.urls.portal}/branding/nobody/theme.css`);
    expect([reset.status, unknown.status]).toEqual([200, 200]);
    expect(await unknown.text()).toBe(await reset.text());
  });

  it('refuses an unknown link with a page no other site may frame, and API clients with the error body', async () => {
    const page = await fetch(`${h.urls.portal}/auth/session_token?token=efs_ss_unknown`, { headers: html });
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(frameAncestorsOf(page)).toBe("frame-ancestors 'none'");
    expect(await page.text()).toContain('"state":"refused"');
    const api = await fetch(`${h.urls.portal}/auth/session_token?token=efs_ss_unknown`);
    expect(api.status).toBe(401);
    expect(await api.json()).toMatchObject({ code: 'UNAUTHORIZED', status_code: 401 });
    expect((await redeemPortalSession(h.urls.portal, 'efs_ct_not_a_session_token')).body).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await redeemPortalSession(h.urls.portal, '')).body).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('serves the site’s API on the portal’s own origin to portal sessions only', async () => {
    const { token } = await openPortal(acme, h, 'acme-site');
    const session = (await redeemPortalSession(h.urls.portal, token)).body.session as string;
    const viaPortal = await apiClient(h.urls.portal, session).get('/v1/site/acme-site/probe');
    expect(viaPortal.status).toBe(200);
    expect(viaPortal.body.principal).toMatchObject({ kind: 'PORTAL_SESSION', integrator_id: 'acme', site_id: 'acme-site' });
    expect(viaPortal.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect((await apiClient(h.urls.portal, session).get('/v1/site/other-site/probe')).status).toBe(403);
    const siteToken = (await acme.post('/v1/auth/site/acme-site')).body.site_access_token as string;
    expect((await apiClient(h.urls.portal, siteToken).get('/v1/site/acme-site/probe')).body).toMatchObject({ code: 'FORBIDDEN' });
    expect((await apiClient(h.urls.portal).get('/v1/site/acme-site/probe')).body).toMatchObject({ code: 'UNAUTHORIZED' });
    // Nothing but the site's own routes: client-token routes are not on this listener at all.
    expect((await apiClient(h.urls.portal, session).post('/v1/probe', { name: 'x' })).status).toBe(404);
  });

  it('serves the built assets with long caching, never framable', async () => {
    const page = await (await openPortal(h.api)).page.text();
    const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)">/.exec(page)![1]!;
    const r = await fetch(`${h.urls.portal}${script}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(frameAncestorsOf(r)).toBe("frame-ancestors 'none'");
    expect((await fetch(`${h.urls.portal}${script}`, { headers: { 'if-none-match': r.headers.get('etag')! } })).status).toBe(304);
    expect((await fetch(`${h.urls.portal}/assets/../../package.json`)).status).toBe(404);
  });
});
