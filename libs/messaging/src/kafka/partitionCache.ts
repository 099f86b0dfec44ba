import type { Admin } from 'kafkajs';
import type { Logger } from '@efs/logging';
import { ServiceUnavailableError } from '../transport.ts';

/** How long a topic's partition count learnt from the broker is used before it is asked again (partitions are added only at a start). */
const PARTITION_COUNT_TTL_MS = 30_000;

/**
 * Topics' partition counts asked of the broker and kept for PARTITION_COUNT_TTL_MS; after that a
 * newer one is looked up while the one known serves, so a lost broker does not hold the caller
 * (publishing fails instead).
 */
export class PartitionCache {
  /** Partition counts learnt from the broker, by topic, with when they were learnt. */
  private readonly counts = new Map<string, { count: number; at: number }>();
  private readonly lookups = new Map<string, Promise<number>>();
  private readonly admin: Admin;
  private readonly log: Logger;

  constructor(admin: Admin, log: Logger) {
    this.admin = admin;
    this.log = log;
  }

  async partitionCount(name: string, timeoutMs: number): Promise<number> {
    const known = this.counts.get(name);
    if (known && Date.now() - known.at < PARTITION_COUNT_TTL_MS) return known.count;
    let lookup = this.lookups.get(name);
    if (!lookup) {
      lookup = this.admin
        .fetchTopicMetadata({ topics: [name] })
        .then(({ topics }) => {
          const count = topics.find((t) => t.name === name)?.partitions.length ?? 0;
          if (count < 1) throw new Error(`topic ${name} has no partitions`);
          this.counts.set(name, { count, at: Date.now() });
          return count;
        })
        .finally(() => this.lookups.delete(name));
      this.lookups.set(name, lookup);
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
}
