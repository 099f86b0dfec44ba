/**
 * Changes to kafkajs 2.2.4, applied once when this module is first imported: two to its request
 * queue (timers), one to when a consumer commits its offsets, one to how its encoder grows.
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
 *
 * A consumer with `autoCommit` commits what it has resolved after every batch it handles: one
 * OffsetCommit request to the broker per partition batch, as many as there are fetches and more
 * (a fetch returns a batch per partition with data), whatever `autoCommitInterval` says. For a
 * request or reply consumer that is a broker request per answer or two at moderate rates, and
 * the broker's CPU follows its request count. Here a consumer run with `autoCommitInterval` or
 * `autoCommitThreshold` commits after a batch only once the interval has passed or the threshold
 * is reached (kafkajs's `commitOffsetsIfNecessary`), as the Java client's auto-commit does; what it
 * resolved is still committed before it rejoins its group (a rebalance, stale metadata: kafkajs
 * would otherwise drop it with the old assignment and read it again) and when it stops, before it
 * leaves the group. What is lost is what a process that dies had resolved since its last commit,
 * and what a member the group has already dropped (its session expired) resolved: the next owner
 * of the partition reads it again. A consumer run without either setting behaves as kafkajs's own.
 */
import { createRequire } from 'node:module';
import { crc32c } from '../crc32c.ts';

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

interface OffsetManagerInternals {
  commitOffsets(): Promise<void>;
}

interface ConsumerGroupInternals {
  autoCommit: boolean;
  autoCommitInterval: number | null;
  autoCommitThreshold: number | null;
  memberId: string | null;
  offsetManager?: OffsetManagerInternals;
  logger: { warn(message: string, extra?: object): void };
  groupId: string;
  joinAndSync(): Promise<void>;
  commitOffsets(): Promise<void>;
  commitOffsetsIfNecessary(): Promise<void>;
  leave(): Promise<void>;
}

interface RunnerInternals {
  running: boolean;
  autoCommit: boolean;
  consumerGroup: ConsumerGroupInternals;
  fetchManager: { stop(): Promise<void> };
  waitForConsumer(): Promise<void>;
  autoCommitOffsets(): Promise<void> | undefined;
  stop(): Promise<void>;
}

const Runner = require('kafkajs/src/consumer/runner.js') as { prototype: RunnerInternals };
const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupInternals };

if (typeof Runner.prototype.autoCommitOffsets !== 'function' || typeof Runner.prototype.waitForConsumer !== 'function' || typeof ConsumerGroup.prototype.joinAndSync !== 'function') {
  throw new Error('kafkajs consumer without autoCommitOffsets, waitForConsumer or joinAndSync: check kafkajsPatch.ts against this kafkajs version');
}

const commitsAtInterval = (group: ConsumerGroupInternals) => group.autoCommit && (group.autoCommitInterval != null || group.autoCommitThreshold != null);

/** Commits what the member resolved and has not committed; a failure is logged (the next owner reads it again). */
async function commitResolved(group: ConsumerGroupInternals): Promise<void> {
  if (!group.offsetManager || !group.memberId) return;
  try {
    await group.offsetManager.commitOffsets();
  } catch (err) {
    group.logger.warn('could not commit resolved offsets', { groupId: group.groupId, error: (err as Error).message });
  }
}

function patchConsumer(): void {
  Runner.prototype.autoCommitOffsets = function autoCommitOffsets(this: RunnerInternals): Promise<void> | undefined {
    if (!this.autoCommit) return undefined;
    return commitsAtInterval(this.consumerGroup) ? this.consumerGroup.commitOffsetsIfNecessary() : this.consumerGroup.commitOffsets();
  };

  const joinAndSync = ConsumerGroup.prototype.joinAndSync;
  ConsumerGroup.prototype.joinAndSync = async function joinAndSyncAfterCommit(this: ConsumerGroupInternals): Promise<void> {
    if (commitsAtInterval(this)) await commitResolved(this);
    return joinAndSync.call(this);
  };

  // kafkajs's stop, with the commit before the member leaves its group.
  Runner.prototype.stop = async function stop(this: RunnerInternals): Promise<void> {
    if (!this.running) return;
    this.running = false;
    try {
      await this.fetchManager.stop();
      await this.waitForConsumer();
      if (commitsAtInterval(this.consumerGroup)) await commitResolved(this.consumerGroup);
      await this.consumerGroup.leave();
    } catch {
      // As kafkajs: a consumer that cannot leave cleanly is dropped by its session timeout.
    }
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
 * through every power of two, and that zero-filling was ~4% of the gateway's CPU.
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
 * telemetry load, a dozen ~10 kB batches a produce request). Its record batch module takes the
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
 * Marks kafkajs's consumer group prototype once patched, with what the patches kept. kafkajs is
 * loaded once per process (Node's module cache), but this module may be evaluated again: a second
 * copy of it, a test runner's fresh module graph. Patching again would wrap `joinAndSync` twice
 * (two commits before each rejoin) and throw at the CRC-32C (its record batch module is loaded by
 * then), so a second evaluation finds the marker and changes nothing.
 */
const PATCHED = Symbol.for('efs.kafkajsPatch');
interface Patched {
  kafkajsCrc32C: (buffer: Buffer) => number;
}
const marked = ConsumerGroup.prototype as unknown as { [PATCHED]?: Patched };
if (!marked[PATCHED]) {
  patchRequestQueue();
  patchConsumer();
  patchEncoder();
  marked[PATCHED] = { kafkajsCrc32C: patchCrc32C() };
}

/** For tests: kafkajs's own CRC-32C function, which the record batch encoder no longer uses. */
export const KafkajsCrc32C = marked[PATCHED].kafkajsCrc32C;

/** For tests: the patched request queue class. */
export const PatchedRequestQueue = RequestQueue;

/** For tests: the patched encoder class. */
export const PatchedEncoder = Encoder;
