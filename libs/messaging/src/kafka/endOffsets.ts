import type { Kafka } from 'kafkajs';
import type { PartitionEnd } from '../topicProgress.ts';

/** The part of kafkajs's cluster (private to it) a lookup of end offsets uses. */
interface ClusterInternals {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number; leader: number }[];
  fetchTopicsOffset(topics: { topic: string; fromBeginning: boolean; partitions: { partition: number }[] }[]): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
}

/**
 * The end offsets of topics' partitions, one ListOffsets request per partition leader.
 * kafkajs's admin (`fetchTopicOffsets`) sends three requests for the same: a Metadata request
 * every time, then ListOffsets for the earliest offsets and again for the latest (measured on
 * kafkajs 2.2.4). This uses a cluster client made by the Kafka instance as its admin's is (kafkajs
 * keeps that factory private, so it is looked up when this is made, failing at once on a kafkajs
 * without it), with its metadata read again when a minute old (partitions added to a topic) and
 * after a failed lookup (a leader moved). The earliest offset is not asked: a compacted topic keeps its last
 * record, so a partition whose end is above zero holds something to read.
 */
export class EndOffsets {
  private cluster: ClusterInternals | undefined;
  private connecting: Promise<ClusterInternals> | undefined;
  private readonly create: (opts: object) => ClusterInternals;
  private readonly onRequest: (apiName: string, count: number) => void;

  constructor(kafka: Kafka, onRequest: (apiName: string, count: number) => void) {
    const factory = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
    const create = factory && (kafka as unknown as Record<symbol, unknown>)[factory];
    if (typeof create !== 'function') throw new Error('kafkajs without its cluster factory: check endOffsets.ts against this kafkajs version');
    this.create = (opts) => (create as (opts: object) => ClusterInternals).call(kafka, opts);
    this.onRequest = onRequest;
  }

  async of(topic: string): Promise<PartitionEnd[]> {
    const cluster = await this.connected();
    try {
      await cluster.addTargetTopic(topic);
      await cluster.refreshMetadataIfNecessary();
      const meta = cluster.findTopicPartitionMetadata(topic);
      const [answer] = await cluster.fetchTopicsOffset([{ topic, fromBeginning: false, partitions: meta.map((p) => ({ partition: p.partitionId })) }]);
      this.onRequest('ListOffsets', new Set(meta.map((p) => p.leader)).size);
      return (answer?.partitions ?? []).map((p) => ({ partition: p.partition, low: 0, high: Number(p.offset) }));
    } catch (err) {
      await cluster.refreshMetadata().catch(() => undefined);
      throw err;
    }
  }

  async stop(): Promise<void> {
    const cluster = this.cluster;
    this.cluster = undefined;
    await cluster?.disconnect().catch(() => undefined);
  }

  private connected(): Promise<ClusterInternals> {
    if (this.cluster) return Promise.resolve(this.cluster);
    this.connecting ??= (async () => {
      const cluster = this.create({ metadataMaxAge: 60_000, allowAutoTopicCreation: false });
      await cluster.connect();
      this.cluster = cluster;
      return cluster;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }
}
