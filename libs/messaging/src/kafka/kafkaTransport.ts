import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Topic, TopicValue, RequestMessage, ReplyMessage, RequestTarget } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import './kafkajsPatch.ts';
import { RegistryCodec } from '../codec.ts';
import { keyPartitioner, partitionOfKey } from '../partitioner.ts';
import {
  ServiceUnavailableError,
  type BatchHandler,
  type BatchMessage,
  type BatchSubscribeOptions,
  type EventHandler,
  type PublishBatchOptions,
  type PublishOptions,
  type RequestHandler,
  type RequestOptions,
  type SubscribeOptions,
  type Transport,
} from '../transport.ts';
import { ConsumerLag } from './consumerLag.ts';
import { Consumers, EVENT_COMMIT_INTERVAL_MS } from './consumers.ts';
import { EndOffsets } from './endOffsets.ts';
import { InMemoryProgress } from './inMemoryProgress.ts';
import { createKafka } from './kafkaClient.ts';
import { PartitionCache } from './partitionCache.ts';
import { ProducerQueue } from './producerQueue.ts';
import { Publisher } from './publisher.ts';
import { ConsumerMetrics } from '../consumerMetrics.ts';
import { RequestMetrics } from '../requestMetrics.ts';
import { RequestCounts } from './requestCounts.ts';
import { RequestReply } from './requestReply.ts';
import { Subscriptions } from './subscriptions.ts';
import { TopicAdmin, type TopicSpec } from './topicAdmin.ts';

export { REQUEST_COMMIT_INTERVAL_MS, EVENT_COMMIT_INTERVAL_MS } from './consumers.ts';

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

/**
 * The production transport: kafkajs with an idempotent producer (acks from all replicas), Avro
 * values through the schema registry, request/reply over per-instance reply topics, consumer
 * groups with retries and dead-letter topics for events. Each job is a part of its own (this
 * folder); this class wires them and orders their start and stop.
 */
export class KafkaTransport implements Transport {
  readonly kind = 'kafka' as const;
  readonly topicsOutliveProcess = true;
  private readonly kafka: Kafka;
  private readonly codec: RegistryCodec;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly log: Logger;
  private readonly prefix: string;
  private stopping = false;
  private readonly counts = new RequestCounts();
  private readonly topicAdmin: TopicAdmin;
  private readonly queue: ProducerQueue;
  private readonly consumers: Consumers;
  private readonly lag: ConsumerLag;
  private readonly endOffsets: EndOffsets;
  private readonly partitions: PartitionCache;
  private readonly publisher: Publisher;
  private readonly requestReply: RequestReply;
  private readonly subscriptions: Subscriptions;
  private readonly inMemory: InMemoryProgress;
  private readonly opts: KafkaTransportOptions;

  constructor(opts: KafkaTransportOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ component: 'kafka' });
    this.kafka = createKafka(opts, this.log);
    this.prefix = opts.topicPrefix ?? '';
    this.codec = new RegistryCodec(opts.registryUrl, this.prefix);
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: keyPartitioner,
    });
    this.admin = this.kafka.admin();
    this.counts.count(this.producer);
    this.counts.count(this.admin);
    this.endOffsets = new EndOffsets(this.kafka, (api, n) => this.counts.add(api, n));
    const isStopping = () => this.stopping;
    const { codec, log, prefix } = this;
    this.topicAdmin = new TopicAdmin(this.admin, log, opts.replicationFactor);
    this.queue = new ProducerQueue(this.producer);
    this.lag = new ConsumerLag({ admin: this.admin, endOffsets: this.endOffsets, log });
    this.consumers = new Consumers({ kafka: this.kafka, topics: this.topicAdmin, counts: this.counts, log, lag: this.lag });
    this.partitions = new PartitionCache(this.admin, log);
    this.publisher = new Publisher({ codec, queue: this.queue, prefix });
    this.inMemory = new InMemoryProgress({ endOffsets: this.endOffsets, log, prefix });
    const consumerMetrics = new ConsumerMetrics();
    const parts = { codec, queue: this.queue, consumers: this.consumers, topics: this.topicAdmin, log, prefix, isStopping };
    this.requestReply = new RequestReply({ ...parts, metrics: new RequestMetrics(), consumerMetrics, replyInstanceId: opts.replyInstanceId, maxWait: opts.maxWaitTimeInMs ?? 5000 });
    this.subscriptions = new Subscriptions({
      ...parts,
      metrics: consumerMetrics,
      inMemory: this.inMemory,
      eventMaxWait: opts.eventMaxWaitTimeInMs ?? 5000,
      eventCommitInterval: opts.eventCommitIntervalMs ?? EVENT_COMMIT_INTERVAL_MS,
    });
  }

  /**
   * How many requests this transport has sent to the broker so far, by API name (Produce, Fetch,
   * OffsetCommit, Heartbeat, …). The broker's CPU follows the number of requests more than their
   * bytes: `make bench-messaging` divides these by the answers of a load.
   */
  brokerRequests(): Record<string, number> {
    return this.counts.byApi();
  }

  async start(): Promise<void> {
    await this.admin.connect();
    await this.ensureTopics(this.opts.topics.filter((t) => t.kind !== 'reply').map((t) => ({ ...t, name: this.prefix + t.name })));
    await this.producer.connect();
    await Promise.all(this.opts.topics.map((t) => this.codec.register(t)));
    await this.requestReply.startReplyConsumer();
    this.lag.start();
  }

  async stop(): Promise<void> {
    // No request is admitted from here on. The requests admitted are handled to the end first
    // (each ends by its deadline at most), while this process still owns their partitions: were
    // the request consumers to leave their groups now, another replica would take the later
    // requests of a key while this one still handles its earlier ones. The reply consumer is
    // still up for the calls they make.
    this.stopping = true;
    this.lag.stop();
    await this.requestReply.serversIdle();
    // Then the consumers: finish the batches in flight before the producer they reply with closes.
    await this.consumers.disconnectAll();
    this.requestReply.rejectPending(new ServiceUnavailableError('shutting down'));
    // Let queued messages (replies, outbox events) leave before the producer closes.
    await this.queue.drain();
    await this.producer.disconnect().catch(() => undefined);
    await this.endOffsets.stop();
    const replyTopic = this.requestReply.replyTopic;
    if (replyTopic) await this.admin.deleteTopics({ topics: [replyTopic], timeout: 3000 }).catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
    this.log.info({ broker_requests: this.brokerRequests() }, 'broker requests sent while running');
  }

  isReady(): Promise<boolean> {
    return this.topicAdmin.isReady();
  }

  /** Creates topics that do not exist yet, with their partitions and retention; existing ones are left alone. */
  ensureTopics(topics: readonly TopicSpec[]): Promise<void> {
    return this.topicAdmin.ensureTopics(topics);
  }

  publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options: PublishOptions = {}): Promise<void> {
    return this.publisher.publish(topic, key, value, options);
  }

  publishBatch<T extends Topic>(topic: T, messages: readonly BatchMessage<TopicValue<T>>[], options: PublishBatchOptions): Promise<void> {
    return this.publisher.publishBatch(topic, messages, options);
  }

  subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options: SubscribeOptions = {}): Promise<void> {
    return this.subscriptions.subscribe(topic, group, handler, options);
  }

  subscribeBatch<T extends Topic>(topic: T, group: string, handler: BatchHandler<TopicValue<T>>, options: BatchSubscribeOptions = {}): Promise<void> {
    return this.subscriptions.subscribeBatch(topic, group, handler, options);
  }

  caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean> {
    return this.inMemory.caughtUp(topic, group, options);
  }

  request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage> {
    return this.requestReply.request(target, request, options);
  }

  serve(target: RequestTarget, handler: RequestHandler): Promise<void> {
    return this.requestReply.serve(target, handler);
  }

  /**
   * Kafka's default partitioner (murmur2 of the key modulo the partition count, as kafkajs and the
   * Java client choose; partitionOfKey) over the topic's partition count (PartitionCache).
   */
  async partitioner(topic: Topic, options: { timeoutMs: number }): Promise<(key: string) => number> {
    const count = await this.partitions.partitionCount(this.prefix + topic.name, options.timeoutMs);
    return (key) => partitionOfKey(key, count);
  }
}
