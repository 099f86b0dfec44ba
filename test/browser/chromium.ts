/**
 * The browser tier's tools: Debian's Chromium driven by playwright-core (which never downloads a
 * browser), a profile that blocks third-party cookies as a browser set to do so does, host pages
 * on other origins that frame the portal, and axe-core run inside a frame.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Frame } from 'playwright-core';
import { testChromiumPath } from '@efs/testing';

/** Flags that keep Chromium off the (closed) network and out of the sandbox it cannot have as root. */
export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A fresh profile whose cookie setting is "block third-party cookies" (`cookie_controls_mode` 1,
 * what chrome://settings/cookies writes), as the most restrictive end users have it.
 */
export async function launchChromium(viewport = { width: 375, height: 800 }, extraArgs: readonly string[] = []): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'efs-chromium-'));
  mkdirSync(join(profile, 'Default'));
  writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify({ profile: { cookie_controls_mode: 1, block_third_party_cookies: true } }));
  const context = await chromium.launchPersistentContext(profile, { executablePath: testChromiumPath(), headless: true, args: [...CHROMIUM_FLAGS, ...extraArgs], viewport });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface HostSite {
  origin: string;
  /** The host page framing `src` in an iframe that fills the viewport. */
  pageFraming(src: string): string;
  close(): Promise<void>;
}

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40" viewBox="0 0 160 40"><rect width="160" height="40" rx="8" fill="#7b1fa2"/><text x="16" y="27" font-size="20" fill="#fff" font-family="sans-serif">Acme</text></svg>';

/**
 * An integrator's app on its own origin (another loopback address: another site for the browser):
 * `/?src=URL` frames the portal at URL; `/logo.svg` is the integrator's logo.
 */
export async function startHostSite(host: string): Promise<HostSite> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${host}`);
    if (url.pathname === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO);
      return;
    }
    const src = url.searchParams.get('src') ?? 'about:blank';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme Energy app</title>' +
        '<style>html,body{margin:0;height:100%}iframe{display:block;width:100%;height:100%;border:0}</style></head>' +
        `<body><iframe title="Energy programs" src="${escapeAttr(src)}"></iframe></body></html>`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const origin = `http://${host}:${port}`;
  return {
    origin,
    pageFraming: (src) => `${origin}/?src=${encodeURIComponent(src)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/**
 * axe-core's WCAG 2.x A/AA and best-practice rules inside a frame. The source is evaluated through
 * the DevTools protocol, which the page's Content-Security-Policy does not govern, so the policy
 * under test stays as it is served (no bypassCSP).
 */
export async function axeViolations(frame: Frame): Promise<AxeViolation[]> {
  await frame.evaluate(axeSource);
  return frame.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })) }));
  });
}

/** Whether the frame's document is wider than its viewport (it would scroll sideways). */
export function horizontalOverflow(frame: Frame): Promise<{ scrollWidth: number; clientWidth: number }> {
  return frame.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
}
