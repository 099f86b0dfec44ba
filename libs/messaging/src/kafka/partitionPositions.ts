import type { Batch } from 'kafkajs';
import { FirstSeen } from './firstSeen.ts';

/** What a member knows of one partition assigned to it. */
export interface PartitionPosition {
  /** Offset of the next record it will handle, once known (a seek at the join, a record resolved). */
  next: number | undefined;
  /**
   * Timestamp (ms) of the record at `next` while the member holds it: fetched, handed to the
   * handler, not yet resolved. Undefined between batches.
   */
  heldTimestamp: number | undefined;
  /** The partition's end offsets as the lag reads saw them, for the age of a record not fetched yet. */
  seen: FirstSeen;
}

/** Where a batch handler is in its batch: resolving offsets moves `next` and the held record along. */
export interface BatchProgress {
  resolved(offset: string): void;
  ended(): void;
}

/**
 * The partitions a consumer's member is assigned and where it is in each, kept from kafkajs's
 * group join and the offsets its batch handler resolves: what consumer lag is computed from
 * (consumerLag.ts). The per-record cost is a comparison and two field writes.
 */
export class PartitionPositions {
  readonly assigned = new Map<number, PartitionPosition>();

  /** The member joined with these partitions, some starting at a known offset (the consumer's seeks). */
  joined(partitions: readonly number[], startAt: ReadonlyMap<number, string>): void {
    this.assigned.clear();
    for (const p of partitions) {
      const start = startAt.get(p);
      this.assigned.set(p, { next: start === undefined ? undefined : Number(start), heldTimestamp: undefined, seen: new FirstSeen() });
    }
  }

  /** The member left its group or is rejoining: it knows nothing until it joins again. */
  left(): void {
    this.assigned.clear();
  }

  /** A batch handed to the handler: its first record is held from now until it is resolved. */
  batch(batch: Pick<Batch, 'partition' | 'messages'>): BatchProgress {
    const position = this.assigned.get(batch.partition);
    const messages = batch.messages;
    let i = 0;
    if (position && messages.length > 0) {
      position.next = Number(messages[0]!.offset);
      position.heldTimestamp = Number(messages[0]!.timestamp);
    }
    return {
      resolved(offset) {
        if (!position) return;
        const n = Number(offset);
        while (i < messages.length && Number(messages[i]!.offset) <= n) i++;
        position.next = n + 1;
        position.heldTimestamp = i < messages.length ? Number(messages[i]!.timestamp) : undefined;
      },
      ended() {
        if (position) position.heldTimestamp = undefined;
      },
    };
  }
}
