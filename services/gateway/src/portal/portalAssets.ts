import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Where `npm run build -w @efs/portal` writes the portal UI. */
export const DEFAULT_PORTAL_DIST = join(import.meta.dirname, '..', '..', '..', '..', 'portal', 'dist');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** What the gateway injects into the page for one integrator and one session token. */
export interface ShellInjection {
  /** The integrator's style sheet (CSS custom properties over the defaults). */
  brandingHref?: string;
  faviconUrl?: string;
  /** Read by the page before it starts (portal/src/boot.ts). */
  boot: Record<string, unknown>;
}

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a non-executed <script> block: `<` escaped, so no text can close the block. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/**
 * The built portal held in memory (a few hundred kilobytes): `index.html` as the page template
 * and every file under `assets/` by its content-hashed name. The files are immutable until the
 * next build, which restarts the gateway.
 */
export class PortalAssets {
  private readonly template: string;
  private readonly files: Map<string, Asset>;

  private constructor(template: string, files: Map<string, Asset>) {
    this.template = template;
    this.files = files;
  }

  /** Undefined when the portal has not been built into `dir`. */
  static load(dir: string): PortalAssets | undefined {
    const index = join(dir, 'index.html');
    if (!existsSync(index)) return undefined;
    const files = new Map<string, Asset>();
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const path = join(d, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name !== 'index.html') {
          const body = readFileSync(path);
          const ext = name.slice(name.lastIndexOf('.'));
          files.set(`/${relative(dir, path).split(sep).join('/')}`, { body, type: TYPES[ext] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
        }
      }
    };
    walk(dir);
    return new PortalAssets(readFileSync(index, 'utf8'), files);
  }

  /** A built file by its path (`/assets/index-abc123.js`); nothing outside the build is reachable. */
  file(path: string): Asset | undefined {
    return this.files.get(path);
  }

  paths(): string[] {
    return [...this.files.keys()];
  }

  /** The page for one integrator: its style sheet after the portal's own, its favicon, the boot data. */
  page(inject: ShellInjection): string {
    const head = [
      inject.brandingHref ? `<link rel="stylesheet" href="${escapeAttr(inject.brandingHref)}">` : '',
      inject.faviconUrl ? `<link rel="icon" href="${escapeAttr(inject.faviconUrl)}">` : '',
      `<script type="application/json" id="efs-boot">${scriptJson(inject.boot)}</script>`,
    ].join('');
    const at = this.template.lastIndexOf('</head>');
    return `${this.template.slice(0, at)}${head}${this.template.slice(at)}`;
  }
}
