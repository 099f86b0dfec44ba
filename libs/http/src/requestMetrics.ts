import type { Attributes, Histogram } from '@efs/telemetry';
import { secondsHistogram } from '@efs/telemetry';

/** The methods named as themselves; any other is `_OTHER` (OpenTelemetry HTTP semantic conventions), so a client cannot mint label values. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

export const methodLabel = (method: string): string => (KNOWN_METHODS.has(method) ? method : '_OTHER');

/** `2xx` for 200..299 and so on; anything outside 100..599 is `5xx` (a server that answered that is broken). */
export function statusClass(status: number): string {
  const c = Math.floor(status / 100);
  return c >= 1 && c <= 5 ? `${c}xx` : '5xx';
}

/**
 * The attributes of a request's duration point, built once per route and status class so the
 * per-request hook allocates none: index 1..5 by `statusCode / 100`.
 */
export function requestAttributes(base: { listener: string; service?: string | undefined }, method: string, route: string | undefined): Attributes[] {
  const byClass: Attributes[] = [];
  for (let c = 1; c <= 5; c++) {
    byClass[c] = {
      ...(base.service ? { service: base.service } : {}),
      listener: base.listener,
      'http.request.method': methodLabel(method),
      ...(route !== undefined ? { 'http.route': route } : {}),
      'http.response.status_class': `${c}xx`,
    };
  }
  return byClass;
}

/** Index into requestAttributes' array for a status code. */
export const statusIndex = (status: number): number => {
  const c = (status / 100) | 0;
  return c >= 1 && c <= 5 ? c : 5;
};

/** http.server.request.duration, in seconds. */
export function requestDurationHistogram(): Histogram {
  return secondsHistogram('http.server.request.duration', 'Time from the arrival of a request to its answer having been sent, by route template');
}
