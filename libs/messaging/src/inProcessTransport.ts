import { randomUUID } from 'node:crypto';
import {
  Headers,
  RequestTopics,
  ReplyTopic,
  deadLetterTopicName,
  DeadLetterHeaders,
  type Topic,
  type TopicValue,
  type RequestMessage,
  type ReplyMessage,
  type RequestTarget,
} from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { SpanKind, inSpan, injectTraceHeaders, extractTraceContext } from '@efs/telemetry';
import { AvroCodec } from './codec.ts';
import { deliverWithRetry } from './deliver.ts';
import { PendingReplies } from './pending.ts';
import {
  ServiceUnavailableError,
  type EventHandler,
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

interface Group {
  name: string;
  topic: Topic;
  handler: EventHandler<unknown>;
  maxAttempts: number;
  queue: StoredMessage[];
  running: boolean;
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
 * The in-process transport: the same interface and Avro encoding as Kafka, for the embedded
 * default (one process, no broker) and fast tests. Each consumer group gets every message of a
 * topic once, in publish order; state (compacted) topics keep the latest value per key, other
 * topics a bounded history, so a subscriber that starts from the beginning catches up as on Kafka.
 */
export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  private readonly codec = new AvroCodec();
  private readonly groups = new Map<string, Group[]>();
  private readonly history = new Map<string, StoredMessage[]>();
  private readonly servers = new Map<RequestTarget, RequestHandler>();
  private readonly pending = new PendingReplies();
  private readonly log: Logger;
  private offsets = 0;
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  readonly deadLetters: DeadLetter[] = [];

  constructor(opts: { logger: Logger; historyLimit?: number; retryBaseDelayMs?: number; stopDrainMs?: number }) {
    this.log = opts.logger.child({ component: 'in-process-transport' });
    this.historyLimit = opts.historyLimit ?? 10_000;
    this.retryBaseDelayMs = opts.retryBaseDelayMs ?? 100;
    this.stopDrainMs = opts.stopDrainMs ?? 15_000;
  }
  private readonly historyLimit: number;
  private readonly retryBaseDelayMs: number;
  private readonly stopDrainMs: number;

  async start(): Promise<void> {
    this.stopped = false;
  }

  /**
   * Delivers what was published before stopping (within `stopDrainMs`), then stops. A published
   * message lives only in this process's memory (the outbox that published it has deleted its
   * row), so abandoning the consumer queues here would lose it for good, e.g. a site update that
   * never reaches a read model. Stop the publishers (outbox relays) first.
   */
  async stop(): Promise<void> {
    const deadline = Date.now() + this.stopDrainMs;
    while (!this.stopped && this.undelivered() > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise<void>((r) => (timer = setTimeout(r, Math.max(1, deadline - Date.now()))))]);
      clearTimeout(timer);
    }
    const left = this.undelivered();
    if (left > 0) this.log.warn({ messages: left }, 'stopping with undelivered messages; they are lost');
    this.stopped = true;
    this.pending.rejectAll(new ServiceUnavailableError('shutting down'));
    await Promise.allSettled([...this.inFlight]);
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
    await inSpan(`${topic.name} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'in-process', 'messaging.destination.name': topic.name } }, async () => {
      const stored: StoredMessage = {
        key,
        bytes: await this.codec.encode(topic, value),
        headers: { ...options.headers, ...injectTraceHeaders(), [Headers.messageId]: id },
        offset: this.offsets++,
      };
      this.remember(topic, stored);
      for (const g of this.groups.get(topic.name) ?? []) this.enqueue(g, stored);
    });
  }

  async subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options: SubscribeOptions = {}): Promise<void> {
    const groups = this.groups.get(topic.name) ?? [];
    if (groups.some((g) => g.name === group)) throw new Error(`group ${group} already subscribed to ${topic.name}`);
    const g: Group = { name: group, topic, handler: handler as EventHandler<unknown>, maxAttempts: options.maxAttempts ?? 5, queue: [], running: false };
    groups.push(g);
    this.groups.set(topic.name, groups);
    if (options.fromBeginning) for (const m of this.history.get(topic.name) ?? []) this.enqueue(g, m);
  }

  async request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage> {
    const topic = RequestTopics[target];
    const correlationId = randomUUID();
    const deadline = Date.now() + options.timeoutMs;
    return inSpan(`${topic.name} request ${request.op}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'in-process', 'efs.op': request.op } }, async () => {
      const reply = this.pending.wait(correlationId, options.timeoutMs, target);
      const bytes = await this.codec.encode(topic, request);
      const headers = { ...injectTraceHeaders(), [Headers.messageId]: correlationId, [Headers.correlationId]: correlationId, [Headers.deadline]: String(deadline) };
      const meta: MessageMeta = { id: correlationId, topic: topic.name, key: options.key ?? request.op, headers, partition: 0, offset: String(this.offsets++) };
      // Like a request topic nobody consumes: without a server the caller waits for its deadline.
      const server = this.servers.get(target);
      if (server && !this.stopped) this.track(this.answer(topic, server, bytes, meta, correlationId));
      return reply;
    });
  }

  async serve(target: RequestTarget, handler: RequestHandler): Promise<void> {
    if (this.servers.has(target)) throw new Error(`${target} is already served in this process`);
    this.servers.set(target, handler);
  }

  private async answer(topic: Topic, server: RequestHandler, bytes: Buffer, meta: MessageMeta, correlationId: string): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    await inSpan(`${topic.name} handle`, { kind: SpanKind.SERVER, parent: extractTraceContext(meta.headers) }, async () => {
      const request = (await this.codec.decode(topic, bytes)) as RequestMessage;
      let reply: ReplyMessage;
      try {
        reply = await server(request, meta);
      } catch (err) {
        this.log.error({ err, op: request.op }, 'request handler failed');
        reply = { status: 500, body: JSON.stringify({ code: 'INTERNAL_ERROR', message: 'Internal error', status_code: 500, detail: [], errors: [] }) };
      }
      const replyBytes = await this.codec.encode(ReplyTopic, reply);
      this.pending.settle(correlationId, (await this.codec.decode(ReplyTopic, replyBytes)) as ReplyMessage);
    });
  }

  private remember(topic: Topic, m: StoredMessage): void {
    if (topic.kind === 'request' || topic.kind === 'reply') return;
    let log = this.history.get(topic.name);
    if (!log) this.history.set(topic.name, (log = []));
    if (topic.compacted) {
      const i = log.findIndex((x) => x.key === m.key);
      if (i >= 0) log.splice(i, 1);
    }
    log.push(m);
    if (log.length > this.historyLimit) log.shift();
  }

  private enqueue(g: Group, m: StoredMessage): void {
    g.queue.push(m);
    if (!g.running) this.track(this.drain(g));
  }

  private async drain(g: Group): Promise<void> {
    g.running = true;
    try {
      while (g.queue.length > 0 && !this.stopped) {
        await new Promise<void>((r) => setImmediate(r));
        const m = g.queue.shift()!;
        const meta: MessageMeta = { id: m.headers[Headers.messageId]!, topic: g.topic.name, key: m.key, headers: m.headers, partition: 0, offset: String(m.offset) };
        let value: unknown;
        try {
          value = await this.codec.decode(g.topic, m.bytes);
        } catch (err) {
          this.deadLetter(g, m, `undecodable: ${(err as Error).message}`);
          continue;
        }
        await inSpan(`${g.topic.name} process`, { kind: SpanKind.CONSUMER, parent: extractTraceContext(m.headers) }, async () => {
          const outcome = await deliverWithRetry(g.handler, { value, meta }, { maxAttempts: g.maxAttempts, logger: this.log, baseDelayMs: this.retryBaseDelayMs });
          if (!outcome.ok) this.deadLetter(g, m, outcome.reason ?? 'failed');
        });
      }
    } finally {
      g.running = false;
    }
  }

  private deadLetter(g: Group, m: StoredMessage, reason: string): void {
    this.deadLetters.push({
      topic: deadLetterTopicName(g.topic.name),
      group: g.name,
      reason,
      key: m.key,
      bytes: m.bytes,
      headers: { ...m.headers, [DeadLetterHeaders.reason]: reason, [DeadLetterHeaders.originalTopic]: g.topic.name, [DeadLetterHeaders.group]: g.name },
    });
    this.log.error({ topic: g.topic.name, group: g.name, reason }, 'message dead-lettered');
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
