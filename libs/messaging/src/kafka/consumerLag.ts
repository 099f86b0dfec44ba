import type { Admin } from 'kafkajs';
import type { Logger } from '@efs/logging';
import { addScrapeGauges, type Attributes } from '@efs/telemetry';
import type { EndOffsets } from './endOffsets.ts';
import { PartitionPositions, type PartitionPosition } from './partitionPositions.ts';

/**
 * Broker answers (end offsets, committed offsets) younger than this are used again: several
 * Prometheus servers scraping one pod, or a scrape retried, cost the brokers nothing more.
 */
export const LAG_REFRESH_MS = 5000;

/** How long a scrape waits for the brokers, below the scrape's own bound (scrapeMetrics, 3 s). */
export const LAG_SCRAPE_TIMEOUT_MS = 2000;

const LAG = { name: 'efs.messaging.consumer.lag', description: 'Records of a partition its consumer group has not consumed yet (this process\'s partitions)', unit: '{record}' };
const LAG_AGE = {
  name: 'efs.messaging.consumer.lag_age_seconds',
  description: 'Age of the oldest record of a partition its consumer group has not consumed (exact when fetched, else a lower bound)',
  unit: 's',
};

/** A consumer whose lag is reported: its labels, its group and topic as on the broker, and its member's positions. */
interface TrackedConsumer {
  group: string;
  topic: string;
  groupId: string;
  kafkaTopic: string;
  /** False for an in-memory read model's group, which never commits. */
  commits: boolean;
  positions: PartitionPositions;
  attrs: Map<number, Attributes>;
}

/** What the brokers answered, and when. */
interface BrokerOffsets {
  at: number;
  ends: Map<string, Map<number, number>>;
  committed: Map<string, Map<number, number>>;
}

/**
 * A partition's lag in records and the age in seconds of its oldest record not consumed:
 * - the position is the member's own (the offset after the last record its handler resolved, or
 *   where it was placed at its join) or the group's committed offset, whichever is further;
 *   unknown (no record handled since the join and nothing committed) answers undefined;
 * - lag is the partition's end offset minus that position (0 when the position is past an end
 *   read up to LAG_REFRESH_MS ago);
 * - age is 0 without lag; the exact age (now minus the record's timestamp) when the member holds
 *   that record (fetched, being handled: a handler stuck on it, or a batch in progress); otherwise
 *   (not fetched yet) the time since a lag read first saw the record exist: a lower bound, as
 *   precise as the scrape interval. Record timestamps are their producers' clocks (CreateTime).
 */
export function partitionLag(position: PartitionPosition, end: number, committed: number | undefined, readAt: number, now: number): { lag: number; ageSeconds: number } | undefined {
  const own = position.next;
  const group = committed !== undefined && committed >= 0 ? committed : undefined;
  const at = own === undefined ? group : group === undefined ? own : Math.max(own, group);
  if (at === undefined) return undefined;
  position.seen.saw(end, readAt);
  const lag = Math.max(0, end - at);
  if (lag === 0) return { lag, ageSeconds: 0 };
  if (position.heldTimestamp !== undefined && own === at) return { lag, ageSeconds: Math.max(0, (now - position.heldTimestamp) / 1000) };
  const since = position.seen.since(at);
  return { lag, ageSeconds: since === undefined ? 0 : Math.max(0, (now - since) / 1000) };
}

/**
 * Consumer lag of this transport's consumers (requests and events; not reply topics), read from
 * the brokers at scrape time: efs.messaging.consumer.lag (records) and
 * efs.messaging.consumer.lag_age_seconds, by consumer_group, topic and partition, for the
 * partitions assigned to this process's member (each replica reports its own; dashboards take
 * the max per partition). Why at scrape time and not on a timer: nothing is asked of the brokers
 * when nobody scrapes (the main command, tests, benches counting broker requests), and a value is
 * as fresh as the scrape. The cost is one OffsetFetch per group and one ListOffsets per partition
 * leader per topic, shared by scrapes within LAG_REFRESH_MS; a scrape gives up after
 * LAG_SCRAPE_TIMEOUT_MS (the brokers unreachable: the series are left out of that scrape) and a
 * later one joins a lookup still under way instead of starting another.
 */
export class ConsumerLag {
  private readonly consumers = new Set<TrackedConsumer>();
  private readonly admin: Admin;
  private readonly endOffsets: EndOffsets;
  private readonly log: Logger;
  private cached: BrokerOffsets | undefined;
  private reading: Promise<BrokerOffsets> | undefined;
  private stopObserving: (() => void) | undefined;

  constructor(deps: { admin: Admin; endOffsets: EndOffsets; log: Logger }) {
    this.admin = deps.admin;
    this.endOffsets = deps.endOffsets;
    this.log = deps.log;
  }

  /** Reports a consumer's lag from now on; answers its positions, for the consumer to keep, and the function that stops reporting it. */
  track(c: { group: string; topic: string; groupId: string; kafkaTopic: string; commits: boolean }): { positions: PartitionPositions; untrack: () => void } {
    const tracked: TrackedConsumer = { ...c, positions: new PartitionPositions(), attrs: new Map() };
    this.consumers.add(tracked);
    return { positions: tracked.positions, untrack: () => this.consumers.delete(tracked) };
  }

  /**
   * Starts answering scrapes (the transport's admin client is connected). Read at scrape time
   * (addScrapeGauges): a partition the member no longer holds is absent from the next scrape, not
   * repeated at its last value.
   */
  start(): void {
    this.stopObserving ??= addScrapeGauges(async (observe) => {
      const offsets = await this.offsets();
      const now = Date.now();
      for (const c of this.consumers) {
        for (const [partition, position] of c.positions.assigned) {
          const end = offsets.ends.get(c.kafkaTopic)?.get(partition);
          if (end === undefined) continue;
          const read = partitionLag(position, end, offsets.committed.get(c.groupId)?.get(partition), offsets.at, now);
          if (!read) continue;
          const attrs = this.attrsOf(c, partition);
          observe(LAG, read.lag, attrs);
          observe(LAG_AGE, read.ageSeconds, attrs);
        }
      }
    });
  }

  stop(): void {
    this.stopObserving?.();
    this.stopObserving = undefined;
  }

  private attrsOf(c: TrackedConsumer, partition: number): Attributes {
    let attrs = c.attrs.get(partition);
    if (!attrs) c.attrs.set(partition, (attrs = { consumer_group: c.group, topic: c.topic, partition: String(partition) }));
    return attrs;
  }

  /** The brokers' offsets, read again when older than LAG_REFRESH_MS; at most LAG_SCRAPE_TIMEOUT_MS of waiting. */
  private async offsets(): Promise<BrokerOffsets> {
    if (this.cached && Date.now() - this.cached.at < LAG_REFRESH_MS) return this.cached;
    this.reading ??= this.read()
      .then((o) => (this.cached = o))
      .finally(() => (this.reading = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the brokers did not answer the consumer lag lookup within ${LAG_SCRAPE_TIMEOUT_MS} ms`)), LAG_SCRAPE_TIMEOUT_MS)));
    try {
      return await Promise.race([this.reading, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async read(): Promise<BrokerOffsets> {
    const at = Date.now();
    const consumers = [...this.consumers].filter((c) => c.positions.assigned.size > 0);
    const topics = [...new Set(consumers.map((c) => c.kafkaTopic))];
    const groups = [...new Map(consumers.filter((c) => c.commits).map((c) => [c.groupId, c.kafkaTopic])).entries()];
    const [ends, committed] = await Promise.all([
      Promise.all(topics.map(async (t) => [t, new Map((await this.endOffsets.of(t)).map((p) => [p.partition, p.high]))] as const)),
      Promise.all(
        groups.map(async ([groupId, topic]) => {
          const [answer] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
          return [groupId, new Map((answer?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]))] as const;
        }),
      ),
    ]).catch((err: Error) => {
      this.log.debug({ err }, 'consumer lag lookup failed');
      throw err;
    });
    return { at, ends: new Map(ends), committed: new Map(committed) };
  }
}
