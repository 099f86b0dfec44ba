import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { deadLetterTopicName, type Topic, type TopicValue } from '@efs/contracts';
import { isDependencyUnavailable } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { SpanKind, inSpan, extractTraceContext } from '@efs/telemetry';
import type { RegistryCodec } from '../codec.ts';
import type { ConsumerMetrics } from '../consumerMetrics.ts';
import { deliverBatchWithRetry, deliverWithRetry } from '../deliver.ts';
import type { BatchHandler, BatchSubscribeOptions, Delivered, EventHandler, SubscribeOptions } from '../transport.ts';
import { eachMessage, type ConsumerRun, type Consumers } from './consumers.ts';
import type { CommitPolicy } from './offsetCommits.ts';
import { deadLetter } from './deadLetter.ts';
import type { InMemoryProgress } from './inMemoryProgress.ts';
import { metaOf } from './messageMeta.ts';
import type { ProducerQueue } from './producerQueue.ts';
import type { TopicAdmin } from './topicAdmin.ts';

export interface SubscriptionsDeps {
  codec: RegistryCodec;
  queue: ProducerQueue;
  consumers: Consumers;
  topics: TopicAdmin;
  inMemory: InMemoryProgress;
  log: Logger;
  prefix: string;
  /** The fetch wait of event consumers (KafkaTransportOptions.eventMaxWaitTimeInMs). */
  eventMaxWait: number;
  /** KafkaTransportOptions.eventCommitIntervalMs. */
  eventCommitInterval: number;
  /** True once the transport stops: a failing handler is not retried further. */
  isStopping: () => boolean;
  metrics: ConsumerMetrics;
}

/** Event consumers: one message at a time (subscribe) or in batches (subscribeBatch), retried, then dead-lettered. */
export class Subscriptions {
  private readonly deps: SubscriptionsDeps;

  constructor(deps: SubscriptionsDeps) {
    this.deps = deps;
  }

  async subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options: SubscribeOptions = {}): Promise<void> {
    const { codec, consumers, topics, log, prefix, eventMaxWait, isStopping } = this.deps;
    const name = prefix + topic.name;
    const dlt = deadLetterTopicName(name);
    await topics.ensureTopics([{ name: dlt, partitions: 1 }]);
    // An in-memory read model: a group of this process alone (every partition), read from the
    // beginning at every start, committing nothing (a rejoin reads the topic again, which the
    // model applies as it did), its progress kept for caughtUp.
    const progress = options.inMemory ? this.deps.inMemory.track(topic, group) : undefined;
    const groupId = progress ? `${prefix}${group}-${randomUUID()}` : prefix + group;
    const counters = this.deps.metrics.of(group, topic.name);
    const onError = counters.failed;
    const each = eachMessage(async (message, partition) => {
      const meta = metaOf(topic.name, partition, message);
      let value: TopicValue<T>;
      try {
        value = (await decodeOnceReachable(codec, topic, message.value!, log, isStopping)) as TopicValue<T>;
      } catch (err) {
        // Stopping while the registry is away: left unresolved for the next owner of the partition.
        if (isDependencyUnavailable(err)) throw err;
        progress?.failed(partition);
        await deadLetter(this.deps, counters, dlt, group, meta, message, `undecodable: ${(err as Error).message}`);
        return;
      }
      await inSpan(`${name} process`, { kind: SpanKind.CONSUMER, parent: extractTraceContext(meta.headers), attributes: { 'messaging.system': 'kafka', 'messaging.consumer.group.name': group, 'messaging.message.id': meta.id } }, async () => {
        const outcome = await deliverWithRetry(handler, { value, meta }, { maxAttempts: options.maxAttempts ?? 5, logger: log, isStopping, onError });
        if (outcome.ok) {
          counters.handled(1);
          progress?.handled(partition, Number(message.offset));
        } else {
          progress?.failed(partition);
          await deadLetter(this.deps, counters, dlt, group, meta, message, outcome.reason ?? 'failed');
        }
      });
    });
    await consumers.run(groupId, name, progress !== undefined || (options.fromBeginning ?? false), eventMaxWait, each, progress ? 'never' : this.commitsOf(options), { group, topic: topic.name });
  }

  /** An idempotent event consumer commits at an interval (0: after every batch, as kafkajs does); any other after every batch. */
  private commitsOf(options: SubscribeOptions): CommitPolicy {
    return { intervalMs: options.idempotent ? this.deps.eventCommitInterval : 0 };
  }

  async subscribeBatch<T extends Topic>(topic: T, group: string, handler: BatchHandler<TopicValue<T>>, options: BatchSubscribeOptions = {}): Promise<void> {
    const { codec, consumers, topics, log, prefix, eventMaxWait, isStopping } = this.deps;
    const name = prefix + topic.name;
    const dlt = deadLetterTopicName(name);
    await topics.ensureTopics([{ name: dlt, partitions: 1 }]);
    const maxSize = options.maxBatchSize ?? 1000;
    const counters = this.deps.metrics.of(group, topic.name);
    const onError = counters.failed;
    const fetch = options.fetchMinBytes ? { minBytes: options.fetchMinBytes, maxWaitTimeInMs: options.fetchMaxWaitMs ?? eventMaxWait } : { maxWaitTimeInMs: eventMaxWait };
    const consumer: ConsumerRun = {
      partitionsConsumedConcurrently: options.concurrency ?? 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let i = 0; i < batch.messages.length; i += maxSize) {
          // A rebalance took the partition away, or we are stopping: the rest is fetched again by whoever owns it next.
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(i, i + maxSize);
          const delivered: { raw: KafkaMessage; d: Delivered<TopicValue<T>> }[] = [];
          for (const message of chunk) {
            const meta = metaOf(topic.name, batch.partition, message);
            try {
              delivered.push({ raw: message, d: { value: (await decodeOnceReachable(codec, topic, message.value!, log, isStopping)) as TopicValue<T>, meta } });
            } catch (err) {
              if (isDependencyUnavailable(err)) throw err;
              await deadLetter(this.deps, counters, dlt, group, meta, message, `undecodable: ${(err as Error).message}`);
            }
          }
          await inSpan(`${name} process`, { kind: SpanKind.CONSUMER, parent: delivered[0] ? extractTraceContext(delivered[0].d.meta.headers) : undefined, attributes: { 'messaging.system': 'kafka', 'messaging.consumer.group.name': group, 'messaging.batch.message_count': delivered.length } }, async () => {
            const failed = await deliverBatchWithRetry(handler, delivered.map((x) => x.d), { maxAttempts: options.maxAttempts ?? 5, logger: log, isStopping, onError });
            counters.handled(delivered.length - failed.length);
            for (const f of failed) await deadLetter(this.deps, counters, dlt, group, f.message.meta, delivered.find((x) => x.d === f.message)!.raw, f.reason);
          });
          resolveOffset(chunk.at(-1)!.offset);
          await heartbeat();
        }
      },
    };
    await consumers.run(prefix + group, name, options.fromBeginning ?? false, fetch, consumer, this.commitsOf(options), { group, topic: topic.name });
  }
}

/**
 * Decodes a message, waiting for the schema registry while it cannot be reached (a writer's
 * schema this process has not fetched yet): the message is fine, so it is not dead-lettered. Throws
 * what decoding throws otherwise (undecodable bytes), and the registry's unavailability once the
 * transport stops (the message is then fetched again by whoever owns its partition next).
 */
async function decodeOnceReachable(codec: RegistryCodec, topic: Topic, bytes: Buffer, log: Logger, isStopping: () => boolean): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await codec.decode(topic, bytes);
    } catch (err) {
      if (!isDependencyUnavailable(err) || isStopping()) throw err;
      if (attempt === 0) log.warn({ err, topic: topic.name }, 'the schema registry cannot be reached; waiting for it to decode the message');
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2000)));
    }
  }
}
