import { notifyManager, QueryObserver, type QueryClient, type QueryKey, type QueryObserverResult } from '@tanstack/query-core';
import { useEffect, useReducer, useState } from 'preact/hooks';
import type { ApiError } from '../api.ts';

/** What a component sees of one query: `data`, `error`, `isPending`, `isFetching`, `refetch()`… */
export type Query<T> = QueryObserverResult<T, ApiError>;

/** One read of the portal: the key it is cached and invalidated under, and how it loads. */
export interface QueryDefinition<T> {
  queryKey: QueryKey;
  queryFn: () => Promise<T>;
}

/**
 * A query of `client` for the component that calls it, kept current by the client's defaults
 * (queryClient.ts). The thin Preact binding of TanStack Query's core: @tanstack/preact-query
 * accepts only Preact 10 as its peer, and this portal runs Preact 11.
 */
export function useQuery<T>(client: QueryClient, query: QueryDefinition<T>): Query<T> {
  const options = client.defaultQueryOptions<T, ApiError, T, T, QueryKey>(query);
  const [observer] = useState(() => new QueryObserver<T, ApiError, T, T, QueryKey>(client, options));
  const [, changed] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    const unsubscribe = observer.subscribe(notifyManager.batchCalls(() => changed(undefined)));
    // A change between the first render and the subscription would otherwise go unseen.
    observer.updateResult();
    return unsubscribe;
  }, [observer]);
  useEffect(() => observer.setOptions(options));
  return observer.getOptimisticResult(options);
}
