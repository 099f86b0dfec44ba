/**
 * Who may frame the portal, and the Content-Security-Policy of its page. An integrator lists the
 * origins of its own app (`efs portal frame-ancestors`); the policy's `frame-ancestors` then makes
 * every browser refuse to show the portal inside any other page.
 */

/**
 * A CSP host-source that names an origin: scheme, host (a `*.` prefix allowed for subdomains, an
 * IPv4 address, or a bracketed IPv6 one) and optional port, nothing after it. Anything that could
 * add a directive or a keyword (`;`, quotes, spaces) cannot match.
 */
const ORIGIN = /^(https?):\/\/((?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}|\*))?$/;

export type FrameOriginsResult = { ok: true; origins: string[] } | { ok: false; message: string };

/** Validates and normalises origins (lower case, no trailing slash, no duplicates). */
export function parseFrameOrigins(values: readonly string[]): FrameOriginsResult {
  const origins: string[] = [];
  for (const raw of values) {
    const v = raw.trim().toLowerCase().replace(/\/$/, '');
    const m = ORIGIN.exec(v);
    if (!m || (m[3] !== undefined && m[3] !== '*' && Number(m[3]) > 65535)) {
      return { ok: false, message: `${JSON.stringify(raw)} is not an origin such as https://app.example.com (scheme http or https, a host name that may start with *., an optional port, no path)` };
    }
    if (!origins.includes(v)) origins.push(v);
  }
  return { ok: true, origins };
}

/** Who may frame a page: any origin (the sandbox without a list), or exactly these (none when empty). */
export type FramePolicy = { any: true } | { any: false; origins: readonly string[] };

/** The directive; none at all for any origin (`*` would still refuse hosts such as file: pages in a WebView). */
export function frameAncestors(policy: FramePolicy): string | undefined {
  if (policy.any) return undefined;
  return policy.origins.length === 0 ? "frame-ancestors 'none'" : `frame-ancestors ${policy.origins.join(' ')}`;
}

/** The origin of an http(s) URL, as a CSP source; undefined for anything else. */
export function sourceOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The policy of the portal page: its own scripts, styles and API only ('self': no inline script,
 * no eval), images and fonts also from the integrator's branding origins, no plugins, no form
 * posts elsewhere, no <base>, and framing as the integrator allows.
 */
export function portalPagePolicy(opts: { framing: FramePolicy; imageSources?: readonly string[]; fontSources?: readonly string[] }): string {
  const list = (extra: readonly string[] | undefined) => ["'self'", ...new Set(extra ?? [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${list(opts.imageSources)} data:`,
    `font-src ${list(opts.fontSources)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    frameAncestors(opts.framing),
  ]
    .filter((d) => d !== undefined)
    .join('; ');
}

/** Every other answer of the portal listener (JSON, assets): nothing to load, never framed. */
export const PORTAL_DEFAULT_POLICY = "default-src 'none'; frame-ancestors 'none'";
