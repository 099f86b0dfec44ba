/**
 * Changes to kafkajs 2.2.4 that its public API has no way to make, applied once when this module
 * is first imported: two to its request queue (timers), one to how its encoder grows, one to its
 * CRC-32C. Each cites the upstream issue or change and the measurement that justifies it
 * (bench/PROFILE.md has the runs). kafkajsPatch.unit.test.ts fails when the kafkajs version
 * changes (KAFKAJS_VERSION): check each patch against the new version's code before moving it.
 * When offsets are committed is not patched: offsetCommits.ts does it with the public API.
 *
 * Every broker connection has a request queue whose `checkPendingRequests` (run after each
 * response) ends by scheduling itself again with `setTimeout(throttledUntil - now)`: without
 * client-side throttling that delay is negative, Node runs it after 1 ms, and the check schedules
 * itself again, forever (tulios/kafkajs#1556 and #1704, open; the fixes proposed, #1667 and #1768,
 * are unmerged). Each process kept a 1 ms timer loop going (790 context switches a second measured
 * on an idle gateway, 25 with this change) that did nothing: it is what the idle services spent
 * most of their CPU on (4–10% each before, 1.4–2.8% after).
 *
 * Here the check is scheduled only when there is something to check: requests waiting behind the
 * in-flight limit (every 10 ms, as kafkajs does, or at the end of a throttle) or a throttle still
 * in force. A request that cannot be sent at once is pushed to the pending list and schedules the
 * check (kafkajs's `push`), and every response runs it, so nothing waits on the loop removed.
 *
 * Each connection also checks its requests in flight for a timeout every 100 ms (a wake-up of
 * the process ten times a second per connection, 8–16 connections a process; the fixed interval
 * came with tulios/kafkajs#650, and no option sets it: `enforceRequestTimeout: false` would drop
 * the timeouts altogether). Here it checks every second: a request times out at most a second
 * after its timeout (10 s, a fetch's long poll more) instead of 0.1 s; what is checked and done
 * on a timeout is kafkajs's own.
 */
import { createRequire } from 'node:module';
import { crc32c } from '../crc32c.ts';

const require = createRequire(import.meta.url);

/** The kafkajs version these patches were written against and checked with. */
export const KAFKAJS_VERSION = '2.2.4';

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

function patchRequestQueue(): void {
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
}

interface EncoderInternals {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
}

/**
 * kafkajs's protocol encoder grows its buffer to the next power of two with `Buffer.alloc`, which
 * zero-fills the new buffer only for every byte to be overwritten: each write advances `offset`
 * by exactly the bytes it writes, and the encoder's bytes are `buf[0, offset)`. A telemetry
 * produce request (a dozen ReadingBatch records, ~120 kB) grows its encoders from 512 bytes
 * through every power of two, and that zero-filling was ~4% of the gateway's CPU. kafkajs grows
 * its buffer this way since tulios/kafkajs#811; no upstream issue asks for an unfilled one.
 * Here the new buffer is not zero-filled; what is copied and kept is kafkajs's own.
 */
const Encoder = require('kafkajs/src/protocol/encoder.js') as { prototype: EncoderInternals; nextPowerOfTwo(n: number): number };
if (typeof Encoder.prototype.ensureAvailable !== 'function' || typeof Encoder.nextPowerOfTwo !== 'function') {
  throw new Error('kafkajs encoder without ensureAvailable: check kafkajsPatch.ts against this kafkajs version');
}
function patchEncoder(): void {
  Encoder.prototype.ensureAvailable = function ensureAvailable(this: EncoderInternals, length: number): void {
    if (this.offset + length <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(this.offset + length));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
}

/**
 * kafkajs computes each record batch's CRC-32C a byte at a time in JS (~6% of the gateway under
 * telemetry load, a dozen ~10 kB batches a produce request; ~5x faster here: 0.08 vs 0.37–0.50 ms
 * per 120 kB). kafkajs has no option for it, and no upstream issue asks for a faster one (its
 * function came with the record batch format, tulios/kafkajs#68). Its record batch module takes the
 * function once, at its own load (`const crc32C = require('../crc32C')`), so the faster one
 * (./crc32c.ts, slicing by 8, same values) is put in the module cache in its place before that
 * module loads; kafkajs loads it only when a produce request is first built, after this module.
 * If it was already loaded (an import order this module did not foresee), kafkajs's own function
 * would stay in use unnoticed, so that throws.
 */
function patchCrc32C(): (buffer: Buffer) => number {
  const crc32CPath = require.resolve('kafkajs/src/protocol/recordBatch/crc32C/index.js');
  const recordBatchPath = require.resolve('kafkajs/src/protocol/recordBatch/v0/index.js');
  if (require.cache[recordBatchPath]) throw new Error('kafkajs record batch module loaded before kafkajsPatch.ts: its CRC-32C cannot be replaced');
  const kafkajsCrc32C = require(crc32CPath) as (buffer: Buffer) => number;
  if (typeof kafkajsCrc32C !== 'function' || kafkajsCrc32C(Buffer.from('123456789')) !== crc32c(Buffer.from('123456789'))) {
    throw new Error('kafkajs crc32C module changed: check kafkajsPatch.ts against this kafkajs version');
  }
  require.cache[crc32CPath]!.exports = crc32c;
  return kafkajsCrc32C;
}

/**
 * Marks kafkajs's request queue prototype once patched, with what the patches kept. kafkajs is
 * loaded once per process (Node's module cache), but this module may be evaluated again: a second
 * copy of it, a test runner's fresh module graph. Patching again would throw at the CRC-32C (its
 * record batch module is loaded by then), so a second evaluation finds the marker and changes
 * nothing.
 */
const PATCHED = Symbol.for('efs.kafkajsPatch');
interface Patched {
  kafkajsCrc32C: (buffer: Buffer) => number;
}
const marked = RequestQueue.prototype as unknown as { [PATCHED]?: Patched };
if (!marked[PATCHED]) {
  patchRequestQueue();
  patchEncoder();
  marked[PATCHED] = { kafkajsCrc32C: patchCrc32C() };
}

/** For tests: kafkajs's own CRC-32C function, which the record batch encoder no longer uses. */
export const KafkajsCrc32C = marked[PATCHED].kafkajsCrc32C;

/** For tests: the patched request queue class. */
export const PatchedRequestQueue = RequestQueue;

/** For tests: the patched encoder class. */
export const PatchedEncoder = Encoder;
