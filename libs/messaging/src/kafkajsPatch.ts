/**
 * A fix for kafkajs 2.2.4's request queue, applied once when this module is first imported.
 *
 * Every broker connection has a request queue whose `checkPendingRequests` (run after each
 * response) ends by scheduling itself again with `setTimeout(throttledUntil - now)`: without
 * client-side throttling that delay is negative, Node runs it after 1 ms, and the check schedules
 * itself again, forever (kafkajs issues 1556 and 1704, unfixed upstream). Each process kept a
 * 1 ms timer loop going (about 1,200 wake-ups a second measured on an idle gateway) that did
 * nothing: it is what the idle services spent most of their CPU on.
 *
 * Here the check is scheduled only when there is something to check: requests waiting behind the
 * in-flight limit (every 10 ms, as kafkajs does, or at the end of a throttle) or a throttle still
 * in force. A request that cannot be sent at once is pushed to the pending list and schedules the
 * check (kafkajs's `push`), and every response runs it, so nothing waits on the loop removed.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's interval for requests waiting behind the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

// The same module instance kafkajs itself loads (one copy of kafkajs, resolved from here).
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };

if (typeof RequestQueue.prototype.scheduleCheckPendingRequests !== 'function') {
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

/** For tests: the patched request queue class. */
export const PatchedRequestQueue = RequestQueue;
