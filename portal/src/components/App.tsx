import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, PortalApi, redeem, standaloneSession } from '../api.ts';
import type { Boot } from '../boot.ts';
import { Portal } from './Portal.tsx';

type State =
  | { kind: 'opening' }
  | { kind: 'choosing' }
  | { kind: 'refused'; title?: string; message: string }
  | { kind: 'ended' }
  | { kind: 'open'; api: PortalApi };

const initial = (boot: Boot, token: string | null): State => {
  if (boot.state === 'refused') return { kind: 'refused', ...(boot.title ? { title: boot.title } : {}), message: boot.message ?? 'This portal link cannot be used.' };
  if (boot.state === 'signed_in') return boot.sites.length === 1 ? { kind: 'opening' } : { kind: 'choosing' };
  return token ? { kind: 'opening' } : { kind: 'refused', message: 'This address has no session token: open the portal from your app.' };
};

/**
 * Opens the portal. Embedded: the page's single-use token is redeemed once into a portal session
 * that lives only in this page's memory (no cookie, no storage), so it works in a cross-site iframe
 * with third-party cookies blocked; reloading needs a new link from the app, as the link is spent.
 * Standalone (the integrator's own host name, signed in with its identity provider): the page
 * trades its first-party login cookie for the same kind of portal session, for the site the user
 * chooses when their account has several, and renews it with the cookie when it runs out.
 */
export function App({ boot, token }: { boot: Boot; token: string | null }) {
  const [state, setState] = useState<State>(() => initial(boot, token));
  const started = useRef(false);
  const standalone = boot.state === 'signed_in';

  const fail = (err: unknown) => setState({ kind: 'refused', message: err instanceof ApiError ? err.message : 'The portal could not be opened. Try again.' });

  const openSite = (siteId: string) => {
    const sessionUrl = boot.session_url!;
    started.current = true;
    setState({ kind: 'opening' });
    standaloneSession(sessionUrl, siteId).then(
      (s) =>
        setState({
          kind: 'open',
          api: new PortalApi(s.session, s.site_id, () => setState({ kind: 'ended' }), async () => (await standaloneSession(sessionUrl, siteId)).session),
        }),
      fail,
    );
  };

  useEffect(() => {
    if (state.kind !== 'opening' || started.current) return;
    if (standalone) {
      openSite(boot.sites[0]!);
      return;
    }
    started.current = true;
    if (!token) return;
    redeem(token).then((s) => setState({ kind: 'open', api: new PortalApi(s.session, s.site_id, () => setState({ kind: 'ended' })) }), fail);
  }, [state.kind, token]);

  const again = standalone || boot.retry ? (boot.retry ?? { url: '/auth/login', label: 'Sign in again' }) : undefined;

  return (
    <>
      <header class="masthead">
        {boot.logo_url ? <img class="logo" src={boot.logo_url} alt={boot.integrator_name ?? 'Logo'} /> : null}
        {standalone && boot.logout_url ? (
          <nav aria-label="Account" class="account">
            <a class="btn secondary" href={boot.logout_url}>
              Sign out
            </a>
          </nav>
        ) : null}
      </header>
      <main id="main">
        <h1>Energy programs</h1>
        {state.kind === 'opening' ? <p role="status">Opening your portal…</p> : null}
        {state.kind === 'choosing' ? <SitePicker sites={boot.sites} onChoose={openSite} /> : null}
        {state.kind === 'refused' ? <Stopped title={state.title ?? 'This link can’t be used'} message={state.message} again={again} /> : null}
        {state.kind === 'ended' ? (
          <Stopped
            title="Your session has ended"
            message={standalone ? 'For your security the portal closes after a while. Sign in again to go on.' : 'For your security the portal closes after a while. Open it again from your app.'}
            again={again}
          />
        ) : null}
        {state.kind === 'open' ? <Portal api={state.api} /> : null}
      </main>
    </>
  );
}

/** A user whose account names several homes picks one. */
function SitePicker({ sites, onChoose }: { sites: string[]; onChoose: (siteId: string) => void }) {
  return (
    <section class="card" aria-labelledby="choose-title">
      <h2 id="choose-title">Choose a home</h2>
      <p>Your account has several homes. Which one do you want to see?</p>
      <ul class="choices">
        {sites.map((id) => (
          <li key={id}>
            <button type="button" class="btn secondary" onClick={() => onChoose(id)}>
              Home {id}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Stopped({ title, message, again }: { title: string; message: string; again: { url: string; label: string } | undefined }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="card stopped" aria-labelledby="stopped-title">
      <h2 id="stopped-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p>{message}</p>
      {again ? (
        <p class="actions">
          <a class="btn" href={again.url}>
            {again.label}
          </a>
        </p>
      ) : null}
    </section>
  );
}
