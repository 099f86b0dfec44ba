/**
 * Two changes to kafkajs 2.2.4's request queue, applied once when this module is first imported.
 *
 * Every broker connection has a request queue whose `checkPendingRequests` (run after each
 * response) ends by scheduling itself again with `setTimeout(throttledUntil - now)`: without
 * client-side throttling that delay is negative, Node runs it after 1 ms, and the check schedules
 * itself again, forever (kafkajs issues 1556 and 1704, unfixed upstream). Each process kept a
 * 1 ms timer loop going (790 context switches a second measured on an idle gateway) that did
 * nothing: it is what the idle services spent most of their CPU on.
 *
 * Here the check is scheduled only when there is something to check: requests waiting behind the
 * in-flight limit (every 10 ms, as kafkajs does, or at the end of a throttle) or a throttle still
 * in force. A request that cannot be sent at once is pushed to the pending list and schedules the
 * check (kafkajs's `push`), and every response runs it, so nothing waits on the loop removed.
 *
 * Each connection also checks its requests in flight for a timeout every 100 ms (a wake-up of
 * the process ten times a second per connection, 8–16 connections a process). Here it checks
 * every second: a request times out at most a second after its timeout (10 s, a fetch's long
 * poll more) instead of 0.1 s; what is checked and done on a timeout is kafkajs's own.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface RequestQueueInternals {
  pending: unknown[];
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  requestTimeoutIntervalId?: NodeJS.Timeout;
  isConnected(): boolean;
  destroy(): void;
  scheduleRequestTimeoutCheck(): void;
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's interval for requests waiting behind the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;
/** How often a connection looks for requests past their timeout (kafkajs: 100 ms). */
export const REQUEST_TIMEOUT_CHECK_INTERVAL = 1000;

// The same module instance kafkajs itself loads (one copy of kafkajs, resolved from here).
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };

if (typeof RequestQueue.prototype.scheduleCheckPendingRequests !== 'function' || typeof RequestQueue.prototype.scheduleRequestTimeoutCheck !== 'function') {
  throw new Error('kafkajs request queue without scheduleCheckPendingRequests: check kafkajsPatch.ts against this kafkajs version');
}

RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
  if (this.throttleCheckTimeoutId) return;
  const throttledFor = this.throttledUntil - Date.now();
  if (this.pending.length === 0 && throttledFor <= 0) return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL);
};

RequestQueue.prototype.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(this: RequestQueueInternals): void {
  if (!this.enforceRequestTimeout) return;
  this.destroy();
  this.requestTimeoutIntervalId = setInterval(() => {
    this.inflight.forEach((request) => {
      if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
    });
    if (!this.isConnected()) this.destroy();
  }, Math.min(this.requestTimeout, REQUEST_TIMEOUT_CHECK_INTERVAL));
};

/** For tests: the patched request queue class. */
export const PatchedRequestQueue = RequestQueue;
