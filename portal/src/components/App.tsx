import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, PortalApi, redeem } from '../api.ts';
import type { Boot } from '../boot.ts';
import { Portal } from './Portal.tsx';

type State = { kind: 'opening' } | { kind: 'refused'; message: string } | { kind: 'ended' } | { kind: 'open'; api: PortalApi };

/**
 * Opens the portal: the page's single-use token is redeemed once into a portal session that lives
 * only in this page's memory (no cookie, no storage), so it works in a cross-site iframe with
 * third-party cookies blocked. Reloading needs a new link from the app, as the link is spent.
 */
export function App({ boot, token }: { boot: Boot; token: string | null }) {
  const [state, setState] = useState<State>(() =>
    boot.state === 'refused' ? { kind: 'refused', message: boot.message ?? 'This portal link cannot be used.' } : token ? { kind: 'opening' } : { kind: 'refused', message: 'This address has no session token: open the portal from your app.' },
  );
  const started = useRef(false);

  useEffect(() => {
    if (state.kind !== 'opening' || started.current || !token) return;
    started.current = true;
    redeem(token).then(
      (s) => setState({ kind: 'open', api: new PortalApi(s.session, s.site_id, () => setState({ kind: 'ended' })) }),
      (err: unknown) => setState({ kind: 'refused', message: err instanceof ApiError ? err.message : 'The portal could not be opened. Try again from your app.' }),
    );
  }, [state.kind, token]);

  return (
    <>
      <header class="masthead">
        {boot.logo_url ? <img class="logo" src={boot.logo_url} alt={boot.integrator_name ?? 'Logo'} /> : null}
      </header>
      <main id="main">
        <h1>Energy programs</h1>
        {state.kind === 'opening' ? <p role="status">Opening your portal…</p> : null}
        {state.kind === 'refused' ? <Stopped title="This link can’t be used" message={state.message} /> : null}
        {state.kind === 'ended' ? <Stopped title="Your session has ended" message="For your security the portal closes after a while. Open it again from your app." /> : null}
        {state.kind === 'open' ? <Portal api={state.api} /> : null}
      </main>
    </>
  );
}

function Stopped({ title, message }: { title: string; message: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="card stopped" aria-labelledby="stopped-title">
      <h2 id="stopped-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p>{message}</p>
    </section>
  );
}
