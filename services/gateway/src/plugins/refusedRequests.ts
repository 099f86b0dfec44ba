import { meter } from '@efs/telemetry';

/**
 * Counts one request refused before any work (efs.http.requests.refused) for a listener and a
 * reason; the attributes are built once, so a refusal under overload allocates none.
 */
export function refusedRequests(listener: string, reason: 'rate_limit' | 'load_shed'): () => void {
  const counter = meter().createCounter('efs.http.requests.refused', { description: 'Requests refused before any work, by reason', unit: '{request}' });
  const attrs = { service: 'gateway', reason, listener };
  return () => counter.add(1, attrs);
}
