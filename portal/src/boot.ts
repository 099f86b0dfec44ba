/**
 * What the gateway tells the page before it starts (a JSON block it injects into the page, see
 * services/gateway/src/portal/portalAssets.ts): whether the link can be used, or, on an
 * integrator's own host name (the standalone portal), that the user is signed in and to which
 * sites; and the integrator's name and logo.
 */
export interface Boot {
  state: 'ready' | 'refused' | 'signed_in';
  title?: string;
  message?: string;
  /** Where to start again (the standalone portal's sign-in), and what the link says. */
  retry?: { url: string; label: string };
  /** Standalone: the sites the user may open, where the page gets a portal session, and where to sign out. */
  sites: string[];
  session_url?: string;
  logout_url?: string;
  integrator_name: string | null;
  logo_url: string | null;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
/** Same-origin paths only (`/auth/login`): the page never sends the user elsewhere on the server's word. */
const path = (v: unknown) => (typeof v === 'string' && /^\/(?!\/)/.test(v) ? v : undefined);

export function readBoot(doc: Document): Boot {
  const text = doc.getElementById('efs-boot')?.textContent;
  try {
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const state = parsed.state === 'refused' || parsed.state === 'signed_in' ? parsed.state : 'ready';
    const retryUrl = path(parsed.retry_url);
    const sessionUrl = path(parsed.session_url);
    const logoutUrl = path(parsed.logout_url);
    return {
      state,
      ...(str(parsed.title) !== undefined ? { title: str(parsed.title)! } : {}),
      ...(str(parsed.message) !== undefined ? { message: str(parsed.message)! } : {}),
      ...(retryUrl ? { retry: { url: retryUrl, label: str(parsed.retry_label) ?? 'Start again' } } : {}),
      sites: Array.isArray(parsed.sites) ? parsed.sites.filter((s): s is string => typeof s === 'string') : [],
      ...(sessionUrl ? { session_url: sessionUrl } : {}),
      ...(logoutUrl ? { logout_url: logoutUrl } : {}),
      integrator_name: str(parsed.integrator_name) ?? null,
      logo_url: str(parsed.logo_url) ?? null,
    };
  } catch {
    return { state: 'ready', sites: [], integrator_name: null, logo_url: null };
  }
}

/** The single-use session token of the page's address. */
export function tokenOf(location: Location): string | null {
  return new URLSearchParams(location.search).get('token');
}
