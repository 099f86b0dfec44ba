/**
 * How the portal keeps what it shows current (TanStack Query's framework-agnostic core): the
 * utility changes enrollments and events at any time, so an open portal reads its data again
 * every REFRESH_INTERVAL_MS while it is visible (never while hidden), at once when it becomes
 * visible or gets the focus back, and after every change the user makes (the caller invalidates
 * what it changed). A read that failed for a reason that may pass is tried again with backoff.
 * Everything lives in this page's memory: no cookie, no storage (the portal runs in cross-site
 * iframes with third-party cookies blocked).
 */
import { focusManager, QueryClient } from '@tanstack/query-core';
import { ApiError } from './api.ts';

/** How often an open, visible portal reads its data again. */
export const REFRESH_INTERVAL_MS = 15_000;

/** Tries after a failed read, waiting 1, 2 and 4 s (TanStack's backoff: doubling, at most 30 s). */
export const READ_RETRIES = 3;

/**
 * Whether a failed read may succeed when tried again: the network or the service failed, or it
 * asked to be called later. A refusal (401 session ended, 404, 422 incomplete site…) stays one.
 */
export const retryable = (err: unknown): boolean => err instanceof ApiError && (err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500);

/**
 * Focus, as TanStack Query understands it, is the page becoming visible (its default) or its window
 * getting the focus back: inside an iframe the user moves between the host app and the portal
 * without the page ever being hidden.
 */
function listenForFocusAndVisibility(): void {
  focusManager.setEventListener((changed) => {
    if (typeof window === 'undefined') return undefined;
    const listener = () => changed();
    window.addEventListener('visibilitychange', listener);
    window.addEventListener('focus', listener);
    return () => {
      window.removeEventListener('visibilitychange', listener);
      window.removeEventListener('focus', listener);
    };
  });
}

/** The query client of one portal session; mount() it while the portal shows, unmount() after. */
export function createQueryClient(): QueryClient {
  listenForFocusAndVisibility();
  return new QueryClient({
    defaultOptions: {
      queries: {
        refetchInterval: REFRESH_INTERVAL_MS,
        refetchIntervalInBackground: false,
        refetchOnWindowFocus: true,
        refetchOnReconnect: true,
        retry: (failures, err) => failures < READ_RETRIES && retryable(err),
      },
    },
  });
}
