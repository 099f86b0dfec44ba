import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin, type Consumer, type ConsumerRunConfig, type Producer, type IHeaders, type KafkaMessage, type ITopicConfig, type Message, type RequestEvent } from 'kafkajs';
import {
  Headers,
  deadlinePassed,
  RequestTopics,
  ReplyTopic,
  replyTopicName,
  deadLetterTopicName,
  DeadLetterHeaders,
  type Topic,
  type TopicValue,
  type RequestMessage,
  type ReplyMessage,
  type RequestTarget,
} from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { SpanKind, continuedTrace, inSpan, injectTraceHeaders, extractTraceContext } from '@efs/telemetry';
import './kafkajsPatch.ts';
import { RegistryCodec } from './codec.ts';
import { keyPartitioner, partitionOfKey } from './partitioner.ts';
import { deliverBatchWithRetry, deliverWithRetry } from './deliver.ts';
import { KeyedRunner } from './keyedRunner.ts';
import { expiredReply, replyOf } from './router.ts';
import { PendingReplies } from './pending.ts';
import { EndOffsets } from './endOffsets.ts';
import { FreshLookup, TopicProgress, type PartitionEnd } from './topicProgress.ts';
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

/** How long a topic's partition count learnt from the broker is used before it is asked again (partitions are added only at a start). */
const PARTITION_COUNT_TTL_MS = 30_000;

export interface KafkaTransportOptions {
  brokers: string[];
  clientId: string;
  registryUrl: string;
  logger: Logger;
  /** Topics this process creates at start (explicit partition counts) if they do not exist. */
  topics: readonly Topic[];
  replicationFactor?: number;
  /** Set on a gateway instance: it creates and consumes its own reply topic. */
  replyInstanceId?: string;
  /**
   * Longest time the broker holds a fetch of a request or reply consumer with no data: 5 s by
   * default. A fetch returns as soon as data arrives, so this does not delay a request or its
   * reply (`make bench-messaging`: p50 4.0–4.5 ms at 500 ms and 4.1–5.3 ms at 5,000 ms); each idle
   * consumer costs a fetch per wait, and the broker as much, so shorter waits only burn CPU.
   */
  maxWaitTimeInMs?: number;
  /**
   * The same for event consumers (subscribe, subscribeBatch: read models, fan-outs), whose fetch
   * also returns as soon as an event arrives. Each idle consumer costs a fetch per wait (and the
   * broker as much), and a process has one per topic it reads: 5 s by default.
   */
  eventMaxWaitTimeInMs?: number;
  /**
   * How often an event consumer whose handler is idempotent (SubscribeOptions.idempotent) commits
   * its offsets while messages flow: EVENT_COMMIT_INTERVAL_MS by default, 0 for after every batch.
   */
  eventCommitIntervalMs?: number;
  /**
   * Prefixed to every topic, consumer group and registry subject, so that several deployments
   * (or test runs) can share one cluster without seeing each other's messages.
   */
  topicPrefix?: string;
}

function headerString(h: IHeaders, name: string): string | undefined {
  const v = h[name];
  if (v === undefined) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
}

function headersToStrings(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(h ?? {})) {
    const v = headerString(h!, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** A consumer's run configuration that handles one message at a time. */
const eachMessage = (each: (message: KafkaMessage, partition: number) => Promise<void>, partitionsConsumedConcurrently = 1): ConsumerRunConfig => ({
  partitionsConsumedConcurrently,
  eachMessage: async ({ message, partition }) => each(message, partition),
});

/**
 * Shorter than kafkajs's defaults so a lost member (or broker) is noticed and replaced within
 * seconds; a heartbeat every 3 s (a third of the session, as Kafka advises) instead of every
 * second, since each is a broker request of every idle consumer.
 */
const consumerTimeouts = { sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 3000 };

/**
 * How often a request or reply consumer commits its offsets while messages flow: kafkajs would
 * commit after every batch, a broker request per answer or two (kafkajsPatch.ts). What they
 * resolved is also committed when they rejoin their group and when they stop. A process that dies
 * leaves up to this much uncommitted; its partitions go to another member only once its session
 * (10 s) has expired, when those requests are past their deadline (REQUEST_TIMEOUT_MS, 5 s) and
 * are dropped unhandled, and a reply read twice finds nobody waiting.
 */
export const REQUEST_COMMIT_INTERVAL_MS = 1000;

/**
 * How often an idempotent event consumer (a read model) commits its offsets while messages flow:
 * kafkajs would commit after every partition batch, several broker requests per fetch (a commission
 * is read by six such consumers: two of sites, four of devices). What they resolved is also committed before they rejoin their
 * group and when they stop (kafkajsPatch.ts); a process that dies leaves up to this much for the
 * next owner to handle again, which its handler, idempotent, turns into no change.
 */
export const EVENT_COMMIT_INTERVAL_MS = 1000;

function kafkaLogLevel(level: string): logLevel {
  return level === 'debug' || level === 'trace' ? logLevel.INFO : logLevel.WARN;
}

/**
 * The production transport: kafkajs with an idempotent producer (acks from all replicas), Avro
 * values through the schema registry, request/reply over per-instance reply topics, consumer
 * groups with retries and dead-letter topics for events.
 */
export class KafkaTransport implements Transport {
  readonly kind = 'kafka' as const;
  readonly topicsOutliveProcess = true;
  private readonly kafka: Kafka;
  private readonly codec: RegistryCodec;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly consumers: Consumer[] = [];
  /** The runners of the served targets (their requests in flight). */
  private readonly servers: KeyedRunner[] = [];
  private readonly pending = new PendingReplies();
  private readonly log: Logger;
  private readonly replyTopic: string | undefined;
  private readonly maxWait: number;
  private readonly eventMaxWait: number;
  private readonly eventCommitInterval: number;
  private stopping = false;
  private readonly outgoing: { topic: string; message: Message; deadline: number | undefined; resolve: () => void; reject: (err: Error) => void }[] = [];
  private flushing = false;
  /** Partition counts learnt from the broker (partitioner), by topic, with when they were learnt. */
  private readonly partitionCounts = new Map<string, { count: number; at: number }>();
  private readonly countLookups = new Map<string, Promise<number>>();
  private readonly prefix: string;
  /** The progress of each `inMemory` subscription, by topic name and the group name it was given. */
  private readonly inMemory = new Map<string, TopicProgress>();
  /** Each topic's end offsets, looked up once for every caughtUp waiting at the moment. */
  private readonly endLookups = new Map<string, FreshLookup<PartitionEnd[]>>();
  private readonly endOffsets: EndOffsets;
  /** Requests sent to the broker by API (Produce, Fetch, OffsetCommit, Heartbeat, …), every client of this transport. */
  private readonly requestCounts = new Map<string, number>();

  private readonly opts: KafkaTransportOptions;

  constructor(opts: KafkaTransportOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ component: 'kafka' });
    const kafkaLog = this.log;
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
      logLevel: kafkaLogLevel(kafkaLog.level),
      logCreator: () => ({ namespace, level, log }) => {
        const { message, ...extra } = log;
        const fn = level <= logLevel.ERROR ? 'error' : level === logLevel.WARN ? 'warn' : 'debug';
        kafkaLog[fn]({ kafkajs: namespace, ...extra }, message);
      },
    });
    this.prefix = opts.topicPrefix ?? '';
    this.codec = new RegistryCodec(opts.registryUrl, this.prefix);
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: keyPartitioner,
    });
    this.admin = this.kafka.admin();
    this.countRequests(this.producer);
    this.countRequests(this.admin);
    this.endOffsets = new EndOffsets(this.kafka, (api, n) => void this.requestCounts.set(api, (this.requestCounts.get(api) ?? 0) + n));
    this.replyTopic = opts.replyInstanceId ? this.prefix + replyTopicName(opts.replyInstanceId) : undefined;
    this.maxWait = opts.maxWaitTimeInMs ?? 5000;
    this.eventMaxWait = opts.eventMaxWaitTimeInMs ?? 5000;
    this.eventCommitInterval = opts.eventCommitIntervalMs ?? EVENT_COMMIT_INTERVAL_MS;
  }

  /**
   * How many requests this transport has sent to the broker so far, by API name (Produce, Fetch,
   * OffsetCommit, Heartbeat, …). The broker's CPU follows the number of requests more than their
   * bytes: `make bench-messaging` divides these by the answers of a load.
   */
  brokerRequests(): Record<string, number> {
    return Object.fromEntries(this.requestCounts);
  }

  private countRequests(client: Producer | Consumer | Admin): void {
    const count = ({ payload }: RequestEvent) => void this.requestCounts.set(payload.apiName, (this.requestCounts.get(payload.apiName) ?? 0) + 1);
    // Each client type declares its own overloads of on(); the request event is the same in all three.
    (client as Producer).on((client as Producer).events.REQUEST, count);
  }

  async start(): Promise<void> {
    await this.admin.connect();
    await this.ensureTopics(this.opts.topics.filter((t) => t.kind !== 'reply').map((t) => ({ ...t, name: this.prefix + t.name })));
    await this.producer.connect();
    await Promise.all(this.opts.topics.map((t) => this.codec.register(t)));
    if (this.replyTopic) await this.startReplyConsumer(this.replyTopic);
  }

  async stop(): Promise<void> {
    // No request is admitted from here on. The requests admitted are handled to the end first
    // (each ends by its deadline at most), while this process still owns their partitions: were
    // the request consumers to leave their groups now, another replica would take the later
    // requests of a key while this one still handles its earlier ones. The reply consumer is
    // still up for the calls they make.
    this.stopping = true;
    await Promise.race([Promise.all(this.servers.map((r) => r.idle())), new Promise((r) => setTimeout(r, 10_000).unref())]);
    // Then the consumers: finish the batches in flight before the producer they reply with closes.
    await Promise.allSettled(this.consumers.map((c) => c.disconnect()));
    this.pending.rejectAll(new ServiceUnavailableError('shutting down'));
    // Let queued messages (replies, outbox events) leave before the producer closes.
    for (let i = 0; i < 500 && (this.flushing || this.outgoing.length > 0); i++) await new Promise((r) => setTimeout(r, 20));
    await this.producer.disconnect().catch(() => undefined);
    await this.endOffsets.stop();
    if (this.replyTopic) await this.admin.deleteTopics({ topics: [this.replyTopic], timeout: 3000 }).catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
    this.log.info({ broker_requests: this.brokerRequests() }, 'broker requests sent while running');
  }

  async isReady(): Promise<boolean> {
    try {
      await Promise.race([
        this.admin.describeCluster(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000)),
      ]);
      return true;
    } catch {
      return false;
    }
  }

  /** Creates topics that do not exist yet, with their partitions and retention; existing ones are left alone. */
  async ensureTopics(topics: readonly { name: string; partitions: number; kind?: Topic['kind']; compacted?: boolean; retentionMs?: number }[]): Promise<void> {
    const existing = new Set(await this.admin.listTopics());
    await this.growPartitions(topics.filter((t) => t.kind === 'event' && existing.has(t.name)));
    const missing: ITopicConfig[] = topics
      .filter((t) => !existing.has(t.name))
      .map((t) => ({
        topic: t.name,
        numPartitions: t.partitions,
        replicationFactor: this.opts.replicationFactor ?? 1,
        configEntries: [
          ...(t.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : []),
          ...(t.retentionMs !== undefined ? [{ name: 'retention.ms', value: String(t.retentionMs) }] : []),
        ],
      }));
    if (missing.length === 0) return;
    try {
      await this.admin.createTopics({ topics: missing, waitForLeaders: false });
    } catch (err) {
      // Another process may be creating the same topics at the same moment: that is fine as long
      // as they come to exist (waitForLeaders below decides); log what the broker said.
      this.log.debug({ err }, 'create topics raced with another process');
    }
    await this.waitForLeaders(missing.map((m) => m.topic));
    this.log.info({ topics: missing.map((m) => m.topic) }, 'created topics');
  }

  /**
   * An event topic whose configured partition count went up (TELEMETRY_PARTITIONS raised to let
   * more consumers in) gets the new partitions. Only event topics: a state topic's keys must stay
   * on their partition for compaction and replay. Partitions are never removed (Kafka cannot).
   */
  private async growPartitions(topics: readonly { name: string; partitions: number }[]): Promise<void> {
    if (topics.length === 0) return;
    const { topics: meta } = await this.admin.fetchTopicMetadata({ topics: topics.map((t) => t.name) });
    const grow = topics.filter((t) => (meta.find((m) => m.name === t.name)?.partitions.length ?? t.partitions) < t.partitions);
    if (grow.length === 0) return;
    try {
      await this.admin.createPartitions({ topicPartitions: grow.map((t) => ({ topic: t.name, count: t.partitions })) });
      this.log.info({ topics: grow.map((t) => `${t.name}:${t.partitions}`) }, 'added partitions');
    } catch (err) {
      // Another process may have grown them at the same moment.
      this.log.debug({ err }, 'create partitions raced with another process');
    }
  }

  /** A topic created a moment ago (maybe by another process) is usable once every partition has a leader. */
  private async waitForLeaders(topics: string[], timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const { topics: meta } = await this.admin.fetchTopicMetadata({ topics });
        if (meta.length === topics.length && meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`topics without leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options: PublishOptions = {}): Promise<void> {
    const id = options.messageId ?? randomUUID();
    const name = this.prefix + topic.name;
    // A message written earlier (an outbox row) carries the trace it was written in: its publish continues that trace.
    await inSpan(`${name} publish`, { kind: SpanKind.PRODUCER, parent: continuedTrace(options.headers), attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': name, 'messaging.message.id': id } }, async () => {
      const bytes = await this.codec.encode(topic, value);
      await this.send(name, { key, value: bytes, headers: { ...options.headers, ...injectTraceHeaders(), [Headers.messageId]: id } });
    });
  }

  async subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options: SubscribeOptions = {}): Promise<void> {
    const name = this.prefix + topic.name;
    const dlt = deadLetterTopicName(name);
    await this.ensureTopics([{ name: dlt, partitions: 1 }]);
    // An in-memory read model: a group of this process alone (every partition), read from the
    // beginning at every start, committing nothing (a rejoin reads the topic again, which the
    // model applies as it did), its progress kept for caughtUp.
    const progress = options.inMemory ? this.track(topic, group) : undefined;
    const groupId = progress ? `${this.prefix}${group}-${randomUUID()}` : this.prefix + group;
    const each = eachMessage(async (message, partition) => {
      const meta = this.metaOf(topic.name, partition, message);
      let value: TopicValue<T>;
      try {
        value = (await this.codec.decode(topic, message.value!)) as TopicValue<T>;
      } catch (err) {
        progress?.failed(partition);
        await this.deadLetter(dlt, group, meta, message, `undecodable: ${(err as Error).message}`);
        return;
      }
      await inSpan(`${name} process`, { kind: SpanKind.CONSUMER, parent: extractTraceContext(meta.headers), attributes: { 'messaging.system': 'kafka', 'messaging.consumer.group.name': group, 'messaging.message.id': meta.id } }, async () => {
        const outcome = await deliverWithRetry(handler, { value, meta }, { maxAttempts: options.maxAttempts ?? 5, logger: this.log, isStopping: () => this.stopping });
        if (outcome.ok) progress?.handled(partition, Number(message.offset));
        else {
          progress?.failed(partition);
          await this.deadLetter(dlt, group, meta, message, outcome.reason ?? 'failed');
        }
      });
    });
    await this.runConsumer(groupId, name, progress !== undefined || (options.fromBeginning ?? false), this.eventMaxWait, progress ? { ...each, autoCommit: false } : { ...each, ...this.commitsOf(options) });
  }

  /** An idempotent event consumer commits at an interval (0: after every batch, as kafkajs does). */
  private commitsOf(options: SubscribeOptions): Pick<ConsumerRunConfig, 'autoCommitInterval'> {
    return options.idempotent && this.eventCommitInterval > 0 ? { autoCommitInterval: this.eventCommitInterval } : {};
  }

  private track(topic: Topic, group: string): TopicProgress {
    const id = `${topic.name}\u0000${group}`;
    if (this.inMemory.has(id)) throw new Error(`group ${group} already subscribed to ${topic.name}`);
    const progress = new TopicProgress();
    this.inMemory.set(id, progress);
    return progress;
  }

  async caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean> {
    const progress = this.inMemory.get(`${topic.name}\u0000${group}`);
    if (!progress) throw new Error(`caughtUp needs an inMemory subscription; ${group} has none to ${topic.name}`);
    const name = this.prefix + topic.name;
    const deadline = Date.now() + options.timeoutMs;
    let lookup = this.endLookups.get(name);
    if (!lookup) {
      lookup = new FreshLookup(() => this.endOffsets.of(name));
      this.endLookups.set(name, lookup);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(1, options.timeoutMs))));
    try {
      const ends = await Promise.race([lookup.next(), late]);
      if (!ends) return false;
      return await progress.waitFor(ends, deadline - Date.now());
    } catch (err) {
      this.log.debug({ err, topic: name }, 'end offsets of the topic unknown; not caught up');
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Kafka's default partitioner (murmur2 of the key modulo the partition count, as kafkajs and the
   * Java client choose; partitionOfKey) over the topic's partition count. The count is asked of the broker and
   * kept for PARTITION_COUNT_TTL_MS; after that a newer one is looked up while the one known
   * serves, so a lost broker does not hold the caller here (publishing fails instead).
   */
  async partitioner(topic: Topic, options: { timeoutMs: number }): Promise<(key: string) => number> {
    const name = this.prefix + topic.name;
    const count = await this.partitionCount(name, options.timeoutMs);
    return (key) => partitionOfKey(key, count);
  }

  private async partitionCount(name: string, timeoutMs: number): Promise<number> {
    const known = this.partitionCounts.get(name);
    if (known && Date.now() - known.at < PARTITION_COUNT_TTL_MS) return known.count;
    let lookup = this.countLookups.get(name);
    if (!lookup) {
      lookup = this.admin
        .fetchTopicMetadata({ topics: [name] })
        .then(({ topics }) => {
          const count = topics.find((t) => t.name === name)?.partitions.length ?? 0;
          if (count < 1) throw new Error(`topic ${name} has no partitions`);
          this.partitionCounts.set(name, { count, at: Date.now() });
          return count;
        })
        .finally(() => this.countLookups.delete(name));
      this.countLookups.set(name, lookup);
      lookup.catch((err: Error) => this.log.warn({ err, topic: name }, 'partition count lookup failed'));
    }
    if (known) return known.count;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceUnavailableError(`the broker did not tell the partitions of ${name}`)), timeoutMs);
    });
    try {
      return await Promise.race([lookup, timedOut]);
    } catch (err) {
      if (err instanceof ServiceUnavailableError) throw err;
      throw new ServiceUnavailableError(`the partitions of ${name} are unknown: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  async publishBatch<T extends Topic>(topic: T, messages: readonly BatchMessage<TopicValue<T>>[], options: PublishBatchOptions): Promise<void> {
    const name = this.prefix + topic.name;
    const deadline = Date.now() + options.timeoutMs;
    await inSpan(`${name} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': name, 'messaging.batch.message_count': messages.length } }, async () => {
      const headers = { ...options.headers, ...injectTraceHeaders() };
      const encoded: Message[] = [];
      for (const m of messages) encoded.push({ key: m.key, value: await this.codec.encode(topic, m.value), headers, ...(m.partition !== undefined ? { partition: m.partition } : {}) });
      let timer: NodeJS.Timeout | undefined;
      // The producer retries a lost broker for longer than a caller can wait: the deadline answers
      // first. What was queued past it is dropped unsent; what was already in flight may still be
      // written, which is why batch consumers must treat a resend as a replacement.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ServiceUnavailableError(`the broker did not acknowledge ${name} within ${options.timeoutMs} ms`)), Math.max(1, deadline - Date.now()));
      });
      try {
        await Promise.race([Promise.all(encoded.map((m) => this.send(name, m, deadline))), timedOut]);
      } catch (err) {
        if (err instanceof ServiceUnavailableError) throw err;
        throw new ServiceUnavailableError(`the broker refused ${name}: ${(err as Error).message}`, { cause: err });
      } finally {
        clearTimeout(timer);
      }
    });
  }

  async subscribeBatch<T extends Topic>(topic: T, group: string, handler: BatchHandler<TopicValue<T>>, options: BatchSubscribeOptions = {}): Promise<void> {
    const name = this.prefix + topic.name;
    const dlt = deadLetterTopicName(name);
    await this.ensureTopics([{ name: dlt, partitions: 1 }]);
    const maxSize = options.maxBatchSize ?? 1000;
    const fetch = options.fetchMinBytes ? { minBytes: options.fetchMinBytes, maxWaitTimeInMs: options.fetchMaxWaitMs ?? this.eventMaxWait } : { maxWaitTimeInMs: this.eventMaxWait };
    await this.runConsumer(this.prefix + group, name, options.fromBeginning ?? false, fetch, {
      ...this.commitsOf(options),
      partitionsConsumedConcurrently: options.concurrency ?? 1,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let i = 0; i < batch.messages.length; i += maxSize) {
          // A rebalance took the partition away, or we are stopping: the rest is fetched again by whoever owns it next.
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(i, i + maxSize);
          const delivered: { raw: KafkaMessage; d: Delivered<TopicValue<T>> }[] = [];
          for (const message of chunk) {
            const meta = this.metaOf(topic.name, batch.partition, message);
            try {
              delivered.push({ raw: message, d: { value: (await this.codec.decode(topic, message.value!)) as TopicValue<T>, meta } });
            } catch (err) {
              await this.deadLetter(dlt, group, meta, message, `undecodable: ${(err as Error).message}`);
            }
          }
          await inSpan(`${name} process`, { kind: SpanKind.CONSUMER, parent: delivered[0] ? extractTraceContext(delivered[0].d.meta.headers) : undefined, attributes: { 'messaging.system': 'kafka', 'messaging.consumer.group.name': group, 'messaging.batch.message_count': delivered.length } }, async () => {
            const failed = await deliverBatchWithRetry(handler, delivered.map((x) => x.d), { maxAttempts: options.maxAttempts ?? 5, logger: this.log, isStopping: () => this.stopping });
            for (const f of failed) await this.deadLetter(dlt, group, f.message.meta, delivered.find((x) => x.d === f.message)!.raw, f.reason);
          });
          resolveOffset(chunk.at(-1)!.offset);
          await heartbeat();
        }
      },
    });
  }

  async request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage> {
    if (!this.replyTopic) throw new Error('this transport was built without a reply topic (replyInstanceId)');
    const topic = RequestTopics[target];
    const correlationId = randomUUID();
    const deadline = Date.now() + options.timeoutMs;
    return inSpan(`${topic.name} request ${request.op}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': topic.name, 'efs.op': request.op } }, async () => {
      const reply = this.pending.wait(correlationId, options.timeoutMs + (options.graceMs ?? 0), target);
      const send = async () => {
        const bytes = await this.codec.encode(topic, request);
        // A request still waiting to be sent at its deadline is not sent: the caller already has its 503.
        await this.send(
          this.prefix + topic.name,
          {
            key: options.key ?? correlationId,
            value: bytes,
            headers: {
              ...injectTraceHeaders(),
              [Headers.messageId]: correlationId,
              [Headers.correlationId]: correlationId,
              [Headers.deadline]: String(deadline),
              [Headers.waitUntil]: String(deadline + (options.graceMs ?? 0)),
              [Headers.replyTo]: this.replyTopic!,
            },
          },
          deadline,
        );
      };
      send().catch((err: Error) => {
        this.log.warn({ err, target, op: request.op }, 'request could not be sent');
        this.pending.fail(correlationId, new ServiceUnavailableError(`${target} unreachable: ${err.message}`));
      });
      return reply;
    });
  }

  /**
   * Serves a request topic: requests of different keys are handled at the same time (up to
   * REQUEST_CONCURRENCY per process), those of one key (a site) one after the other, in the
   * order of their partition, as the in-process transport does. A request's offset is committed
   * once it is admitted, not once answered: a process that dies while handling it leaves it
   * unanswered, and its caller's deadline (503, nothing committed after it) answers instead.
   */
  async serve(target: RequestTarget, handler: RequestHandler): Promise<void> {
    const topic = RequestTopics[target];
    const runner = new KeyedRunner({ onError: (err) => this.log.error({ err, target }, 'request could not be handled') });
    this.servers.push(runner);
    await this.runConsumer(`${this.prefix}efs-${target}-requests`, this.prefix + topic.name, false, this.maxWait, {
      autoCommitInterval: REQUEST_COMMIT_INTERVAL_MS,
      partitionsConsumedConcurrently: topic.partitions,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (const message of batch.messages) {
          // A rebalance took the partition away, or we are stopping: the rest goes to whoever owns it next.
          if (this.stopping || !isRunning() || isStale()) return;
          const meta = this.metaOf(topic.name, batch.partition, message);
          // Waits while the process has REQUEST_CONCURRENCY requests admitted (the topic keeps the
          // rest); after such a wait the partition may have gone to another replica, or we may be
          // stopping: then the request is left to the next owner, unhandled here.
          const admitted = await runner.admit(meta.key ?? meta.id, () => this.answerRequest(topic, handler, message, meta), () => !this.stopping && isRunning() && !isStale());
          if (!admitted) return;
          resolveOffset(message.offset);
          await heartbeat();
        }
      },
    });
  }

  /** Handles one request in its turn and sends the reply; a request past its deadline is dropped unhandled. */
  private async answerRequest(topic: (typeof RequestTopics)[RequestTarget], handler: RequestHandler, message: KafkaMessage, meta: MessageMeta): Promise<void> {
    const deadline = Number(meta.headers[Headers.deadline] ?? 0);
    const waitUntil = Math.max(deadline, Number(meta.headers[Headers.waitUntil] ?? 0)) || undefined;
    const replyTo = meta.headers[Headers.replyTo];
    const correlationId = meta.headers[Headers.correlationId];
    if (!replyTo || !correlationId) {
      this.log.warn({ message_id: meta.id }, 'request without reply-to or correlation id dropped');
      return;
    }
    if (deadlinePassed(meta.headers[Headers.deadline])) {
      // Not handled. A caller still waiting (its grace) learns at once that nothing was done.
      this.log.info({ message_id: meta.id, late_ms: Date.now() - deadline }, 'request past its deadline dropped unhandled');
      if (waitUntil && Date.now() < waitUntil) {
        const bytes = await this.codec.encode(ReplyTopic, expiredReply());
        this.send(replyTo, { key: correlationId, value: bytes, headers: { [Headers.messageId]: randomUUID(), [Headers.correlationId]: correlationId } }, waitUntil).catch(() => undefined);
      }
      return;
    }
    await inSpan(`${topic.name} handle`, { kind: SpanKind.SERVER, parent: extractTraceContext(meta.headers), attributes: { 'messaging.system': 'kafka', 'messaging.message.id': meta.id } }, async (span) => {
      const request = (await this.codec.decode(topic, message.value!)) as RequestMessage;
      span.setAttribute('efs.op', request.op);
      const bytes = await this.codec.encode(ReplyTopic, await replyOf(handler, request, meta, this.log));
      // Not awaited: the next request of this key need not wait for the broker's ack of this
      // reply (order matters between requests, not between replies). A reply that fails to go
      // out leaves its caller to its deadline (503); stop() drains the queue.
      this.send(replyTo, { key: correlationId, value: bytes, headers: { ...injectTraceHeaders(), [Headers.messageId]: randomUUID(), [Headers.correlationId]: correlationId } }, waitUntil).catch((err: Error) =>
        this.log.warn({ err, correlation_id: correlationId }, 'reply could not be sent; the caller will time out'),
      );
    });
  }

  private async startReplyConsumer(replyTopic: string): Promise<void> {
    await this.ensureTopics([{ name: replyTopic, partitions: ReplyTopic.partitions, retentionMs: ReplyTopic.retentionMs! }]);
    await this.runConsumer(`${this.prefix}efs-replies-${this.opts.replyInstanceId}`, replyTopic, false, this.maxWait, {
      ...eachMessage(async (message) => {
        const correlationId = headerString(message.headers ?? {}, Headers.correlationId);
        if (!correlationId || !message.value) return;
        const reply = (await this.codec.decode(ReplyTopic, message.value)) as ReplyMessage;
        if (!this.pending.settle(correlationId, reply)) this.log.debug({ correlation_id: correlationId }, 'late reply dropped');
      }),
      autoCommitInterval: REQUEST_COMMIT_INTERVAL_MS,
    });
  }

  /**
   * Connects, subscribes and runs a consumer; resolves once it has joined its group with its
   * partitions assigned and knows where it starts reading each of them, so that a message
   * produced after this resolves is consumed (a request sent right after serve(), a reply right
   * after start()). Without a committed offset and without fromBeginning, kafkajs would look up
   * the partition's end only at its first fetch, after the join: a message produced in between
   * would fall before that end and never be read. Such partitions start instead at the end as it
   * was before the consumer joined (a seek made at the join, before any fetch).
   */
  private async runConsumer(groupId: string, topic: string, fromBeginning: boolean, fetch: number | { maxWaitTimeInMs: number; minBytes?: number }, run: ConsumerRunConfig): Promise<void> {
    const fetchConfig = typeof fetch === 'number' ? { maxWaitTimeInMs: fetch } : fetch;
    const consumer = this.kafka.consumer({ groupId, ...fetchConfig, allowAutoTopicCreation: false, ...consumerTimeouts });
    this.countRequests(consumer);
    const startAt = fromBeginning ? new Map<number, string>() : await this.endsWithoutCommittedOffset(topic, groupId);
    const joined = new Promise<void>((resolve) => {
      const off = consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        off();
        const assigned = payload.memberAssignment[topic] ?? [];
        for (const partition of assigned) {
          const offset = startAt.get(partition);
          if (offset !== undefined) consumer.seek({ topic, partition, offset });
        }
        if (assigned.length === 0) this.log.info({ topic, group: payload.groupId }, 'joined the group with none of the topic\'s partitions (more members than partitions)');
        resolve();
      });
    });
    consumer.on(consumer.events.CRASH, (e) => this.log.warn({ err: e.payload.error, topic, restart: e.payload.restart }, 'consumer crashed'));
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning });
    this.consumers.push(consumer);
    await consumer.run(run);
    await joined;
  }

  /** The end offset of each partition of a topic on which a group has no committed offset. */
  private async endsWithoutCommittedOffset(topic: string, groupId: string): Promise<Map<number, string>> {
    const [committed, ends] = await Promise.all([
      this.whileRetriable(() => this.admin.fetchOffsets({ groupId, topics: [topic] })),
      this.whileRetriable(() => this.admin.fetchTopicOffsets(topic)),
    ]);
    const has = new Set((committed.find((t) => t.topic === topic)?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => p.partition));
    return new Map(ends.filter((e) => !has.has(e.partition)).map((e) => [e.partition, e.high]));
  }

  /**
   * Runs an admin request again while the broker answers with a retriable error, for up to 60 s.
   * A broker that has just started answers "coordinator loading" or "not the coordinator" for a
   * while as it creates its offsets topic; kafkajs's admin does not retry those itself.
   */
  private async whileRetriable<T>(request: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + 60_000;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        return await request();
      } catch (err) {
        if (!(err as { retriable?: boolean }).retriable || Date.now() + wait > giveUpAt) throw err;
        this.log.info({ err, retry_in_ms: wait }, 'broker not ready for an admin request; retrying');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /**
   * Queues a message for the producer. The idempotent producer sends one request at a time
   * (kafkajs allows no more in flight), so everything queued while a send is in flight leaves
   * together in the next sendBatch: no added latency when idle, far fewer round trips under load.
   * A message whose deadline (epoch ms) passes while it waits is dropped, not sent.
   */
  private send(topic: string, message: Message, deadline?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.outgoing.push({ topic, message, deadline, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.outgoing.length > 0) {
        const now = Date.now();
        const batch = this.outgoing.splice(0, this.outgoing.length);
        const live = batch.filter((o) => {
          if (o.deadline === undefined || o.deadline > now) return true;
          o.reject(new ServiceUnavailableError('deadline passed before the message could be sent'));
          return false;
        });
        if (live.length === 0) continue;
        const byTopic = new Map<string, Message[]>();
        for (const o of live) {
          const list = byTopic.get(o.topic);
          if (list) list.push(o.message);
          else byTopic.set(o.topic, [o.message]);
        }
        const deadlines = live.map((o) => o.deadline);
        const timeout = deadlines.every((d) => d !== undefined) ? Math.max(1, Math.max(...(deadlines as number[])) - now) : 30_000;
        try {
          await this.producer.sendBatch({ acks: -1, timeout, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          for (const o of live) o.resolve();
        } catch (err) {
          for (const o of live) o.reject(err as Error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private metaOf(topic: string, partition: number, message: KafkaMessage): MessageMeta {
    const headers = headersToStrings(message.headers);
    return {
      id: headers[Headers.messageId] ?? `${topic}/${partition}/${message.offset}`,
      topic,
      key: message.key ? message.key.toString('utf8') : null,
      headers,
      partition,
      offset: message.offset,
    };
  }

  private async deadLetter(dlt: string, group: string, meta: MessageMeta, message: KafkaMessage, reason: string): Promise<void> {
    await this.send(dlt, {
      key: message.key,
      value: message.value,
      headers: {
        ...meta.headers,
        [DeadLetterHeaders.reason]: reason.slice(0, 1000),
        [DeadLetterHeaders.originalTopic]: meta.topic,
        [DeadLetterHeaders.originalPartition]: String(meta.partition),
        [DeadLetterHeaders.originalOffset]: meta.offset,
        [DeadLetterHeaders.group]: group,
      },
    });
    this.log.error({ topic: meta.topic, message_id: meta.id, dead_letter_topic: dlt, reason }, 'message dead-lettered');
  }
}
