import type { Consumer, EachBatchHandler, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@efs/logging';
import type { ConsumerLag } from './consumerLag.ts';
import { OffsetCommitter, type CommitPolicy } from './offsetCommits.ts';
import type { RequestCounts } from './requestCounts.ts';
import type { TopicAdmin } from './topicAdmin.ts';

/**
 * What a consumer does with what it fetches: a batch handler that resolves (`resolveOffset`) each
 * message it is done with; what it resolved is committed as its CommitPolicy says. Its
 * `isRunning()` turns false when the consumer stops.
 */
export interface ConsumerRun {
  partitionsConsumedConcurrently?: number;
  eachBatch: EachBatchHandler;
}

/**
 * A consumer that handles one message at a time, as kafkajs's `eachMessage` does: each message
 * is resolved once handled, with a heartbeat after it; the rest of the batch is left once the
 * consumer stops or the partition's position moved (a rebalance, a seek).
 */
export const eachMessage = (each: (message: KafkaMessage, partition: number) => Promise<void>, partitionsConsumedConcurrently = 1): ConsumerRun => ({
  partitionsConsumedConcurrently,
  eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
    for (const message of batch.messages) {
      if (!isRunning() || isStale()) return;
      await each(message, batch.partition);
      resolveOffset(message.offset);
      await heartbeat();
    }
  },
});

/**
 * Shorter than kafkajs's defaults so a lost member (or broker) is noticed and replaced within
 * seconds; a heartbeat every 3 s (a third of the session, as Kafka advises) instead of every
 * second, since each is a broker request of every idle consumer.
 */
const consumerTimeouts = { sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 3000 };

/**
 * How often a request or reply consumer commits its offsets while messages flow: kafkajs would
 * commit after every batch, a broker request per answer or two (offsetCommits.ts). What they
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
 * group and when they stop (offsetCommits.ts); a process that dies leaves up to this much for the
 * next owner to handle again, which its handler, idempotent, turns into no change.
 */
export const EVENT_COMMIT_INTERVAL_MS = 1000;

interface ConsumersDeps {
  kafka: Kafka;
  topics: TopicAdmin;
  counts: RequestCounts;
  log: Logger;
  lag: ConsumerLag;
}

/** The kafkajs consumers of a transport: each joins its group, starts where it should, and is disconnected at the stop. */
export class Consumers {
  private readonly consumers: { consumer: Consumer; commits: OffsetCommitter; untrack: () => void }[] = [];
  private readonly deps: ConsumersDeps;

  constructor(deps: ConsumersDeps) {
    this.deps = deps;
  }

  /**
   * Connects, subscribes and runs a consumer; resolves once it has joined its group with its
   * partitions assigned and knows where it starts reading each of them, so that a message
   * produced after this resolves is consumed (a request sent right after serve(), a reply right
   * after start()). Without a committed offset and without fromBeginning, kafkajs would look up
   * the partition's end only at its first fetch, after the join: a message produced in between
   * would fall before that end and never be read. Such partitions start instead at the end as it
   * was before the consumer joined (a seek made at the join, before any fetch). With
   * `autoCommit: false` kafkajs does not commit a seek: the position is committed with the first
   * commit of what the consumer resolved (offsetCommits.ts), before a rebalance or at its stop.
   *
   * With `lag` (labels: the group and topic names without a prefix or suffix) the consumer's lag
   * is reported (consumerLag.ts): its member's partitions, and where it is in each, are kept.
   */
  async run(
    groupId: string,
    topic: string,
    fromBeginning: boolean,
    fetch: number | { maxWaitTimeInMs: number; minBytes?: number },
    run: ConsumerRun,
    policy: CommitPolicy,
    lag?: { group: string; topic: string },
  ): Promise<void> {
    const { kafka, topics, counts, log } = this.deps;
    const fetchConfig = typeof fetch === 'number' ? { maxWaitTimeInMs: fetch } : fetch;
    const consumer = kafka.consumer({ groupId, ...fetchConfig, allowAutoTopicCreation: false, ...consumerTimeouts });
    counts.count(consumer);
    const startAt = fromBeginning ? new Map<number, string>() : await topics.endsWithoutCommittedOffset(topic, groupId);
    const tracked = lag ? this.deps.lag.track({ ...lag, groupId, kafkaTopic: topic, commits: policy !== 'never' }) : undefined;
    const positions = tracked?.positions;
    if (positions) {
      // Every join (the first one seeks to startAt, below); until the next, the member keeps its partitions.
      let first = true;
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        positions.joined(payload.memberAssignment[topic] ?? [], first ? startAt : new Map());
        first = false;
      });
      for (const left of [consumer.events.REBALANCING, consumer.events.STOP, consumer.events.CRASH]) consumer.on(left, () => positions.left());
    }
    const joined = new Promise<void>((resolve) => {
      const off = consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        off();
        const assigned = payload.memberAssignment[topic] ?? [];
        for (const partition of assigned) {
          const offset = startAt.get(partition);
          if (offset !== undefined) consumer.seek({ topic, partition, offset });
        }
        if (assigned.length === 0) log.info({ topic, group: payload.groupId }, 'joined the group with none of the topic\'s partitions (more members than partitions)');
        resolve();
      });
    });
    consumer.on(consumer.events.CRASH, (e) => log.warn({ err: e.payload.error, topic, restart: e.payload.restart }, 'consumer crashed'));
    const commits = new OffsetCommitter(policy, log, groupId);
    consumer.on(consumer.events.REBALANCING, () => commits.beforeRejoin());
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning });
    this.consumers.push({ consumer, commits, untrack: tracked?.untrack ?? (() => {}) });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: run.partitionsConsumedConcurrently ?? 1,
      eachBatch: commits.eachBatch(async (payload) => {
        const isRunning = () => payload.isRunning() && !commits.closing;
        if (!positions) return run.eachBatch({ ...payload, isRunning });
        const progress = positions.batch(payload.batch);
        const resolveOffset = (offset: string) => {
          payload.resolveOffset(offset);
          progress.resolved(offset);
        };
        try {
          await run.eachBatch({ ...payload, resolveOffset, isRunning });
        } finally {
          progress.ended();
        }
      }),
    });
    await joined;
  }

  /** Finishes the batches in flight, commits what they resolved, and leaves the groups. */
  async disconnectAll(): Promise<void> {
    await Promise.allSettled(
      this.consumers.map(async ({ consumer, commits, untrack }) => {
        untrack();
        await commits.close();
        await consumer.disconnect();
      }),
    );
  }
}
