import type { Admin, ITopicConfig } from 'kafkajs';
import type { Topic } from '@efs/contracts';
import type { Logger } from '@efs/logging';

export interface TopicSpec {
  name: string;
  partitions: number;
  kind?: Topic['kind'];
  compacted?: boolean;
  retentionMs?: number;
}

/** Topic administration over kafkajs's admin client: creating topics, growing them, and the offsets a consumer starts from. */
export class TopicAdmin {
  readonly admin: Admin;
  private readonly log: Logger;
  private readonly replicationFactor: number;

  constructor(admin: Admin, log: Logger, replicationFactor = 1) {
    this.admin = admin;
    this.log = log;
    this.replicationFactor = replicationFactor;
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
  async ensureTopics(topics: readonly TopicSpec[]): Promise<void> {
    const existing = new Set(await this.admin.listTopics());
    await this.growPartitions(topics.filter((t) => t.kind === 'event' && existing.has(t.name)));
    const missing: ITopicConfig[] = topics
      .filter((t) => !existing.has(t.name))
      .map((t) => ({
        topic: t.name,
        numPartitions: t.partitions,
        replicationFactor: this.replicationFactor,
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

  /** The end offset of each partition of a topic on which a group has no committed offset. */
  async endsWithoutCommittedOffset(topic: string, groupId: string): Promise<Map<number, string>> {
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
}
