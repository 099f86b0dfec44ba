/**
 * What the gateway tells the page before it starts (a JSON block it injects into the page, see
 * services/gateway/src/portal/portalAssets.ts): whether the link can be used, and the integrator's
 * name and logo.
 */
export interface Boot {
  state: 'ready' | 'refused';
  message?: string;
  integrator_name: string | null;
  logo_url: string | null;
}

export function readBoot(doc: Document): Boot {
  const text = doc.getElementById('efs-boot')?.textContent;
  try {
    const parsed = text ? (JSON.parse(text) as Partial<Boot>) : {};
    return {
      state: parsed.state === 'refused' ? 'refused' : 'ready',
      ...(typeof parsed.message === 'string' ? { message: parsed.message } : {}),
      integrator_name: typeof parsed.integrator_name === 'string' ? parsed.integrator_name : null,
      logo_url: typeof parsed.logo_url === 'string' ? parsed.logo_url : null,
    };
  } catch {
    return { state: 'ready', integrator_name: null, logo_url: null };
  }
}

/** The single-use session token of the page's address. */
export function tokenOf(location: Location): string | null {
  return new URLSearchParams(location.search).get('token');
}
