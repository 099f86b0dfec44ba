import { randomUUID } from 'node:crypto';
import {
  Headers,
  RequestTopics,
  ReplyTopic,
  deadLetterTopicName,
  deadlinePassed,
  DeadLetterHeaders,
  outsideRequest,
  type Topic,
  type TopicValue,
  type RequestMessage,
  type ReplyMessage,
  type RequestTarget,
} from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { SpanKind, continuedTrace, handOverTrace, inHandedOverSpan, inSpan, injectTraceHeaders, extractTraceContext, type SpanContext } from '@efs/telemetry';
import { AvroCodec } from './codec.ts';
import { deliverBatchWithRetry, deliverWithRetry } from './deliver.ts';
import { KeyedRunner } from './keyedRunner.ts';
import { expiredReply, replyOf } from './router.ts';
import { PendingReplies } from './pending.ts';
import { ConsumerMetrics, type ConsumerCounters } from './consumerMetrics.ts';
import { RequestMetrics } from './requestMetrics.ts';
import { TopicProgress } from './topicProgress.ts';
import {
  ServiceUnavailableError,
  type BatchHandler,
  type BatchMessage,
  type BatchSubscribeOptions,
  type Delivered,
  type EventHandler,
  type PublishBatchOptions,
  type MessageMeta,
  type PublishOptions,
  type RequestHandler,
  type RequestOptions,
  type SubscribeOptions,
  type Transport,
} from './transport.ts';

interface StoredMessage {
  key: string;
  bytes: Buffer;
  headers: Record<string, string>;
  offset: number;
}

/** A message queued for one consumer group; `handled` tells its publisher this group is done with it. */
interface Delivery {
  m: StoredMessage;
  handled?: () => void;
}

interface Group {
  name: string;
  topic: Topic;
  handler: EventHandler<unknown>;
  /** Set for a batch subscription: queued messages are handed over up to this many at a time. */
  batch?: { handler: BatchHandler<unknown>; maxSize: number };
  maxAttempts: number;
  queue: Delivery[];
  running: boolean;
  /** The deliveries being handled now (taken from the queue). */
  inHand: Delivery[];
  /** Set for an `inMemory` subscription: how far it has handled its topic, for caughtUp. */
  progress?: TopicProgress;
  counters: ConsumerCounters;
}

export interface DeadLetter {
  topic: string;
  group: string;
  reason: string;
  key: string;
  bytes: Buffer;
  headers: Record<string, string>;
}

/**
 * The in-process transport: the same interface and Avro schemas as Kafka, for the embedded
 * default (one process, no broker) and fast tests. Events are stored and delivered Avro-encoded;
 * a request and its reply (one receiver, nothing stored) are checked against their schema and
 * handed over as they are, which reads the same as a round trip (AvroCodec.conform) at a tenth of
 * its cost per request (the reply's body is a JSON text, encoded and decoded byte by byte).
 *
 * Each consumer group gets every message of a topic once, in publish order; state (compacted) topics keep the latest value per key, other
 * topics a bounded history, so a subscriber that starts from the beginning catches up as on Kafka.
 *
 * Nothing here survives the process, so a message is durable only once its consumers have
 * handled it: publish() resolves then (every consumer group subscribed at that moment has handled
 * or dead-lettered it), and only then does the outbox relay that published it delete its row. A
 * crash or a stop before that leaves the row, which is published again at the next start
 * (consumers are idempotent). With `awaitOpen`, publishes wait for open(): a process that starts
 * several services lets each subscribe first, so none misses what a relay republishes at start.
 */
export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  /** Topics live in this process's memory: each start begins with them empty. */
  readonly topicsOutliveProcess: boolean = false;
  private readonly codec = new AvroCodec();
  private readonly groups = new Map<string, Group[]>();
  /** Per topic, in publish order: by key on a compacted topic (the latest per key), else by arrival. */
  private readonly history = new Map<string, Map<unknown, StoredMessage>>();
  private arrivals = 0;
  /** Each served target's handler, and the runner that keeps its requests in order per key. */
  private readonly servers = new Map<RequestTarget, { handler: RequestHandler; runner: KeyedRunner; counters: ConsumerCounters }>();
  private readonly pending = new PendingReplies();
  private readonly requestMetrics = new RequestMetrics();
  private readonly consumerMetrics = new ConsumerMetrics();
  private readonly log: Logger;
  private offsets = 0;
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  readonly deadLetters: DeadLetter[] = [];
  /** Publishes waiting for their consumers; rejected at stop (their outbox rows stay). */
  private readonly awaiting = new Set<(err: Error) => void>();
  private readonly opened: Promise<void>;
  /** Lets publishes through (see `awaitOpen`). */
  readonly open: () => void;

  constructor(opts: { logger: Logger; historyLimit?: number; retryBaseDelayMs?: number; stopDrainMs?: number; awaitOpen?: boolean }) {
    this.log = opts.logger.child({ component: 'in-process-transport' });
    this.historyLimit = opts.historyLimit ?? 10_000;
    this.retryBaseDelayMs = opts.retryBaseDelayMs ?? 100;
    this.stopDrainMs = opts.stopDrainMs ?? 15_000;
    let open!: () => void;
    this.opened = new Promise<void>((r) => (open = r));
    this.open = open;
    if (!opts.awaitOpen) open();
  }
  private readonly historyLimit: number;
  private readonly retryBaseDelayMs: number;
  private readonly stopDrainMs: number;

  async start(): Promise<void> {
    this.stopped = false;
  }

  /**
   * Delivers what was published before stopping (within `stopDrainMs`), then stops. What is left
   * undelivered was not acknowledged to its publisher, so its outbox row stays and the next start
   * publishes it again. Stop the publishers (outbox relays) first.
   */
  async stop(): Promise<void> {
    const deadline = Date.now() + this.stopDrainMs;
    while (!this.stopped && this.undelivered() > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise<void>((r) => (timer = setTimeout(r, Math.max(1, deadline - Date.now()))))]);
      clearTimeout(timer);
    }
    const left = this.undelivered();
    if (left > 0) this.log.warn({ messages: left }, 'stopping with undelivered messages; their outbox rows stay and are published again at the next start');
    this.stopped = true;
    this.pending.rejectAll(new ServiceUnavailableError('shutting down'));
    await Promise.allSettled([...this.inFlight]);
    for (const reject of [...this.awaiting]) reject(new ServiceUnavailableError('stopped before every consumer handled the message'));
  }

  /** Messages published but not yet handled by every consumer group. */
  private undelivered(): number {
    let n = 0;
    for (const groups of this.groups.values()) for (const g of groups) n += g.queue.length + (g.running ? 1 : 0);
    return n;
  }

  async isReady(): Promise<boolean> {
    return !this.stopped;
  }

  async publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options: PublishOptions = {}): Promise<void> {
    const id = options.messageId ?? randomUUID();
    // A message written earlier (an outbox row) carries the trace it was written in: its publish continues that trace.
    await inSpan(`${topic.name} publish`, { kind: SpanKind.PRODUCER, parent: continuedTrace(options.headers), attributes: { 'messaging.system': 'in-process', 'messaging.destination.name': topic.name } }, async () => {
      const bytes = await this.codec.encode(topic, value);
      const headers = { ...options.headers, ...injectTraceHeaders(), [Headers.messageId]: id };
      await this.opened;
      if (this.stopped) throw new ServiceUnavailableError('the in-process transport is stopped');
      const stored: StoredMessage = { key, bytes, headers, offset: this.offsets++ };
      this.remember(topic, stored);
      const groups = this.groups.get(topic.name) ?? [];
      if (groups.length === 0) return;
      await new Promise<void>((resolve, reject) => {
        let left = groups.length;
        this.awaiting.add(reject);
        const handled = () => {
          if (--left > 0) return;
          this.awaiting.delete(reject);
          resolve();
        };
        for (const g of groups) this.enqueue(g, { m: stored, handled });
      });
    });
  }

  async subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options: SubscribeOptions = {}): Promise<void> {
    const groups = this.groups.get(topic.name) ?? [];
    if (groups.some((g) => g.name === group)) throw new Error(`group ${group} already subscribed to ${topic.name}`);
    const g: Group = { name: group, topic, handler: handler as EventHandler<unknown>, maxAttempts: options.maxAttempts ?? 5, queue: [], running: false, inHand: [], counters: this.consumerMetrics.of(group, topic.name) };
    if (options.inMemory) g.progress = new TopicProgress();
    groups.push(g);
    this.groups.set(topic.name, groups);
    if (options.fromBeginning || options.inMemory) for (const m of this.history.get(topic.name)?.values() ?? []) this.enqueue(g, { m });
  }

  /**
   * What the topic holds for the group is what was queued for it (a publish resolves only once
   * every group has handled it): caught up once the messages queued or being handled now are.
   */
  async caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean> {
    const g = this.groups.get(topic.name)?.find((x) => x.name === group);
    if (!g?.progress) throw new Error(`caughtUp needs an inMemory subscription; ${group} has none to ${topic.name}`);
    let high = 0;
    for (const d of g.inHand) high = Math.max(high, d.m.offset + 1);
    for (const d of g.queue) high = Math.max(high, d.m.offset + 1);
    return g.progress.waitFor([{ partition: 0, low: 0, high }], options.timeoutMs);
  }

  /**
   * Like Kafka's: resolves once acknowledged (here: every consumer group subscribed now has
   * handled every message) or fails with ServiceUnavailableError at `timeoutMs`. At the deadline
   * the messages no group has started on are withdrawn (from every queue and the history, so all
   * groups agree, as with a record Kafka never wrote); those already being handled may still be
   * written, which is why batch consumers treat a resend as a replacement.
   */
  /** One partition here: every key is on partition 0. */
  async partitioner(_topic: Topic, _options: { timeoutMs: number }): Promise<(key: string) => number> {
    return () => 0;
  }

  async publishBatch<T extends Topic>(topic: T, messages: readonly BatchMessage<TopicValue<T>>[], options: PublishBatchOptions): Promise<void> {
    if (this.stopped) throw new ServiceUnavailableError('transport stopped');
    const deadline = Date.now() + options.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(1, options.timeoutMs))));
    const late = () => new ServiceUnavailableError(`the consumers of ${topic.name} did not acknowledge within ${options.timeoutMs} ms`);
    try {
      await inSpan(`${topic.name} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'in-process', 'messaging.destination.name': topic.name, 'messaging.batch.message_count': messages.length } }, async () => {
        const headers = { ...options.headers, ...injectTraceHeaders() };
        const encoded = await Promise.all(messages.map(async (m) => ({ key: m.key, bytes: await this.codec.encode(topic, m.value) })));
        if ((await Promise.race([this.opened, expired])) === 'expired' || Date.now() >= deadline) throw late();
        if (this.stopped) throw new ServiceUnavailableError('the in-process transport is stopped');
        const stored: StoredMessage[] = encoded.map((e) => {
          const offset = this.offsets++;
          return { key: e.key, bytes: e.bytes, headers: { ...headers, [Headers.messageId]: `${topic.name}/0/${offset}` }, offset };
        });
        for (const m of stored) this.remember(topic, m);
        const groups = this.groups.get(topic.name) ?? [];
        if (groups.length === 0 || stored.length === 0) return;
        let reject!: (err: Error) => void;
        const acknowledged = new Promise<void>((resolve, fail) => {
          reject = fail;
          let left = groups.length * stored.length;
          const handled = () => {
            if (--left > 0) return;
            this.awaiting.delete(reject);
            resolve();
          };
          this.awaiting.add(reject);
          for (const m of stored) for (const g of groups) this.enqueue(g, { m, handled });
        });
        if ((await Promise.race([acknowledged, expired])) === 'expired') {
          this.awaiting.delete(reject);
          this.withdraw(topic, groups, new Set(stored));
          throw late();
        }
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Takes back the messages that no group has started on (see publishBatch). */
  private withdraw(topic: Topic, groups: readonly Group[], messages: Set<StoredMessage>): void {
    const queued = groups.map((g) => new Set(g.queue.map((d) => d.m)));
    const untouched = new Set([...messages].filter((m) => queued.every((q) => q.has(m))));
    if (untouched.size === 0) return;
    for (const g of groups) g.queue = g.queue.filter((d) => !untouched.has(d.m));
    const log = this.history.get(topic.name);
    if (log) for (const [key, m] of log) if (untouched.has(m)) log.delete(key);
  }

  async subscribeBatch<T extends Topic>(topic: T, group: string, handler: BatchHandler<TopicValue<T>>, options: BatchSubscribeOptions = {}): Promise<void> {
    await this.subscribe(topic, group, async (m) => handler([m as Delivered<TopicValue<T>>]), options);
    const g = this.groups.get(topic.name)!.find((x) => x.name === group)!;
    g.batch = { handler: handler as BatchHandler<unknown>, maxSize: options.maxBatchSize ?? 1000 };
  }

  async request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage> {
    const started = performance.now();
    const topic = RequestTopics[target];
    const correlationId = randomUUID();
    const deadline = Date.now() + options.timeoutMs;
    const waitMs = options.timeoutMs + (options.graceMs ?? 0);
    const answered = inSpan(`${topic.name} request ${request.op}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'in-process', 'efs.op': request.op } }, async () => {
      // Handed over as it is, after checking it against the topic's schema (see AvroCodec.conform).
      this.codec.conform(topic, request);
      const reply = this.pending.wait(correlationId, waitMs, target);
      // No traceparent: the trace is handed over below, and nothing else reads it from a request's headers.
      const headers = {
        [Headers.messageId]: correlationId,
        [Headers.correlationId]: correlationId,
        [Headers.deadline]: String(deadline),
        [Headers.waitUntil]: String(deadline + (options.graceMs ?? 0)),
        [Headers.operation]: request.op,
      };
      // As on Kafka, a request without a key names its own id as its key.
      const key = options.key ?? correlationId;
      const meta: MessageMeta = { id: correlationId, topic: topic.name, key, headers, partition: 0, offset: String(this.offsets++) };
      // Like a request topic nobody consumes: without a server the caller waits for its deadline.
      const server = this.servers.get(target);
      // The trace goes to the handler as the traceparent above would take it there, without parsing it back.
      const caller = handOverTrace();
      // The answer is the server's work, not the caller's: it runs free of the caller's deadline.
      // Requests of one key are answered one after the other, of different keys at the same time;
      // a request without a key waits behind no other.
      if (server && !this.stopped) this.track(outsideRequest(async () => (await server.runner.admit(options.key, () => this.answer(target, server, request, meta, correlationId, caller)))!.done));
      return reply;
    });
    return this.requestMetrics.timed(target, request.op, started, answered);
  }

  async serve(target: RequestTarget, handler: RequestHandler): Promise<void> {
    if (this.servers.has(target)) throw new Error(`${target} is already served in this process`);
    const runner = new KeyedRunner({ onError: (err) => this.log.error({ err, target }, 'in-process request failed') });
    // Counted as Kafka's request consumers are, under the group name they have there.
    this.servers.set(target, { handler, runner, counters: this.consumerMetrics.of(`efs-${target}-requests`, RequestTopics[target].name) });
  }

  private async answer(target: RequestTarget, server: { handler: RequestHandler; counters: ConsumerCounters }, request: RequestMessage, meta: MessageMeta, correlationId: string, caller: SpanContext | undefined): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    // As on Kafka: a request that waited past its deadline (a busy process) is not handled; the
    // caller, if it still waits, learns at once that nothing was done.
    if (deadlinePassed(meta.headers[Headers.deadline])) {
      this.requestMetrics.expired(target, request.op);
      this.log.info({ message_id: meta.id, op: request.op, late_ms: Date.now() - Number(meta.headers[Headers.deadline]) }, 'request past its deadline dropped unhandled');
      this.pending.settle(correlationId, expiredReply());
      return;
    }
    await inHandedOverSpan(`${RequestTopics[target].name} handle`, { kind: SpanKind.SERVER }, caller, async () => {
      const reply = await replyOf(server.handler, request, meta, this.log);
      this.codec.conform(ReplyTopic, reply);
      this.pending.settle(correlationId, reply);
    });
    server.counters.handled(1);
  }

  private remember(topic: Topic, m: StoredMessage): void {
    if (topic.kind === 'request' || topic.kind === 'reply') return;
    let log = this.history.get(topic.name);
    if (!log) this.history.set(topic.name, (log = new Map()));
    // A Map keeps insertion order: deleting a key's message and setting it again moves it last,
    // in constant time however long the history (a scan of it was a cost of every commission).
    const key = topic.compacted ? m.key : this.arrivals++;
    log.delete(key);
    log.set(key, m);
    if (log.size > this.historyLimit) log.delete(log.keys().next().value);
  }

  private enqueue(g: Group, d: Delivery): void {
    g.queue.push(d);
    // A consumer's work is not the publisher's: it runs free of any request deadline the publish was made under.
    if (!g.running) this.track(outsideRequest(() => this.drain(g)));
  }

  private async drain(g: Group): Promise<void> {
    g.running = true;
    try {
      while (g.queue.length > 0 && !this.stopped) {
        await new Promise<void>((r) => setImmediate(r));
        const taken = g.queue.splice(0, g.batch ? g.batch.maxSize : 1);
        g.inHand = taken;
        const delivered: { m: StoredMessage; d: Delivered<unknown> }[] = [];
        for (const { m } of taken) {
          const meta: MessageMeta = { id: m.headers[Headers.messageId]!, topic: g.topic.name, key: m.key, headers: m.headers, partition: 0, offset: String(m.offset) };
          try {
            delivered.push({ m, d: { value: await this.codec.decode(g.topic, m.bytes), meta } });
          } catch (err) {
            this.deadLetter(g, m, `undecodable: ${(err as Error).message}`);
          }
        }
        const lost = new Set<StoredMessage>();
        if (delivered.length > 0) await inSpan(`${g.topic.name} process`, { kind: SpanKind.CONSUMER, parent: extractTraceContext(delivered[0]!.m.headers) }, async () => {
          const opts = { maxAttempts: g.maxAttempts, logger: this.log, baseDelayMs: this.retryBaseDelayMs, onError: g.counters.failed };
          if (g.batch) {
            const failed = await deliverBatchWithRetry(g.batch.handler, delivered.map((x) => x.d), opts);
            g.counters.handled(delivered.length - failed.length);
            for (const f of failed) lost.add(this.deadLetter(g, delivered.find((x) => x.d === f.message)!.m, f.reason));
            return;
          }
          const { m, d } = delivered[0]!;
          const outcome = await deliverWithRetry(g.handler, d, opts);
          if (outcome.ok) g.counters.handled(1);
          else lost.add(this.deadLetter(g, m, outcome.reason ?? 'failed'));
        });
        g.inHand = [];
        if (g.progress) {
          const decoded = new Set(delivered.map((x) => x.m));
          for (const { m } of taken) {
            if (decoded.has(m) && !lost.has(m)) g.progress.handled(0, m.offset);
            else g.progress.failed(0);
          }
        }
        // Handled (or dead-lettered) by this group: its publishers may now let go of them.
        for (const { handled } of taken) handled?.();
      }
    } finally {
      g.running = false;
      g.inHand = [];
    }
  }

  /** Records a message the group gave up on; answers it. */
  private deadLetter(g: Group, m: StoredMessage, reason: string): StoredMessage {
    this.deadLetters.push({
      topic: deadLetterTopicName(g.topic.name),
      group: g.name,
      reason,
      key: m.key,
      bytes: m.bytes,
      headers: { ...m.headers, [DeadLetterHeaders.reason]: reason, [DeadLetterHeaders.originalTopic]: g.topic.name, [DeadLetterHeaders.group]: g.name },
    });
    g.counters.deadLettered();
    this.log.error({ topic: g.topic.name, group: g.name, reason }, 'message dead-lettered');
    return m;
  }

  /** Resolves when every queued message has been handled (tests use it to wait without sleeping). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    p.catch((err: Error) => this.log.error({ err }, 'in-process delivery failed')).finally(() => this.inFlight.delete(p));
  }
}
