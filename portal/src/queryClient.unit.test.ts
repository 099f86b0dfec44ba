import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { environmentManager, QueryObserver } from '@tanstack/query-core';
import { ApiError } from './api.ts';
import { createQueryClient, READ_RETRIES, REFRESH_INTERVAL_MS, retryable } from './queryClient.ts';

const failure = (status: number) => new ApiError(status, { code: `HTTP_${status}`, message: `failed with ${status}`, status_code: status, detail: [], errors: [] });

describe('how the open portal keeps its data current', () => {
  // A page's window and document as far as the client looks at them, on fake timers.
  const page = { visibilityState: 'visible' as DocumentVisibilityState };
  let window: EventTarget;
  beforeEach(() => {
    vi.useFakeTimers();
    window = new EventTarget();
    page.visibilityState = 'visible';
    vi.stubGlobal('window', window);
    vi.stubGlobal('document', page);
    environmentManager.setIsServer(() => false);
  });
  afterEach(() => {
    environmentManager.setIsServer(() => typeof globalThis.window === 'undefined');
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  const observe = <T>(queryFn: () => Promise<T>) => {
    const client = createQueryClient();
    client.mount();
    const observer = new QueryObserver<T, ApiError>(client, client.defaultQueryOptions<T, ApiError>({ queryKey: ['what'], queryFn }));
    const unsubscribe = observer.subscribe(() => undefined);
    return {
      observer,
      stop() {
        unsubscribe();
        client.unmount();
        client.clear();
      },
    };
  };
  const show = (state: DocumentVisibilityState) => {
    page.visibilityState = state;
    window.dispatchEvent(new Event('visibilitychange'));
  };

  it('reads again every interval while visible, never while hidden, and at once when shown again', async () => {
    const queryFn = vi.fn(async () => 'data');
    const { stop } = observe(queryFn);
    await vi.advanceTimersByTimeAsync(0);
    expect(queryFn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(REFRESH_INTERVAL_MS - 1);
    expect(queryFn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(queryFn).toHaveBeenCalledTimes(2);

    show('hidden');
    await vi.advanceTimersByTimeAsync(REFRESH_INTERVAL_MS * 4);
    expect(queryFn).toHaveBeenCalledTimes(2);
    show('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(queryFn).toHaveBeenCalledTimes(3);
    stop();
  });

  it('reads again when its window gets the focus back (an iframe the user returns to from the host app)', async () => {
    const queryFn = vi.fn(async () => 'data');
    const { stop } = observe(queryFn);
    await vi.advanceTimersByTimeAsync(1000);
    expect(queryFn).toHaveBeenCalledTimes(1);
    window.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(0);
    expect(queryFn).toHaveBeenCalledTimes(2);
    stop();
  });

  it('tries a read that failed in the network or the service again after 1, 2 and 4 s, then shows the error', async () => {
    const queryFn = vi.fn(async (): Promise<string> => {
      throw failure(503);
    });
    const { observer, stop } = observe(queryFn);
    const calls: number[] = [];
    for (const wait of [0, 999, 1, 1999, 1, 3999, 1]) {
      await vi.advanceTimersByTimeAsync(wait);
      calls.push(queryFn.mock.calls.length);
    }
    expect(calls).toEqual([1, 1, 2, 2, 3, 3, 4]);
    expect(observer.getCurrentResult()).toMatchObject({ status: 'error', failureCount: READ_RETRIES + 1, error: failure(503) });
    stop();
  });

  it('shows a refusal at once, without trying again', async () => {
    const queryFn = vi.fn(async (): Promise<string> => {
      throw failure(404);
    });
    const { observer, stop } = observe(queryFn);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(queryFn).toHaveBeenCalledTimes(1);
    expect(observer.getCurrentResult()).toMatchObject({ status: 'error', failureCount: 1 });
    stop();
  });

  it('counts the network, time-outs, throttling and server errors as passing; refusals and bugs not', () => {
    for (const status of [0, 408, 429, 500, 502, 503, 504]) expect(retryable(failure(status)), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422]) expect(retryable(failure(status)), String(status)).toBe(false);
    expect(retryable(new TypeError('x is undefined'))).toBe(false);
  });
});
