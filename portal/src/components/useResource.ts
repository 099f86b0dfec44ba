import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): Promise<void>;
}

/** Data loaded from the API when the component appears, reloadable after a change. */
export function useResource<T>(load: () => Promise<T>): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const latest = useRef(load);
  latest.current = load;
  const reload = useCallback(async () => {
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await latest.current();
      setState({ data, loading: false });
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError(0, { code: 'ERROR', message: 'Something went wrong. Try again.', status_code: 0, detail: [], errors: [] });
      setState((s) => ({ ...s, error, loading: false }));
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
