import type { EachBatchPayload, OffsetsByTopicPartition } from 'kafkajs';
import type { Logger } from '@efs/logging';

/**
 * When a consumer commits what it resolved: `{ intervalMs: 0 }` after every batch (kafkajs's
 * `autoCommit`), `{ intervalMs: n }` at most once every n ms while messages flow, or never (an
 * in-memory read model, which reads its topic from the beginning at every start).
 */
export type CommitPolicy = { intervalMs: number } | 'never';

/** kafkajs's commit of a member's resolved offsets, from the eachBatch payload: the current generation's, no retries. */
interface MemberCommit {
  commit: EachBatchPayload['commitOffsetsIfNecessary'];
  uncommitted: () => OffsetsByTopicPartition;
}

/**
 * A consumer's offset commits, through kafkajs's public API only. The consumer runs with
 * `autoCommit: false` and `eachBatchAutoResolve: false`; its batch handler resolves each message
 * it is done with (`resolveOffset`), and this commits what is resolved and not yet committed
 * (`uncommittedOffsets`, passed to the payload's `commitOffsetsIfNecessary`, which commits the
 * offsets it is given at once): after a batch once the interval has passed, when the interval
 * ends after a batch that did not commit (a timer, armed only while something is uncommitted),
 * when the group is about to rebalance (kafkajs's REBALANCING event) and when it stops.
 *
 * Why not kafkajs's own `autoCommitInterval`: with `autoCommit` it commits after every batch
 * whatever the interval says (tulios/kafkajs#759: the interval holds only until its first
 * commit), a broker request per answer or two on a request topic. Why the payload's functions
 * and not `consumer.commitOffsets`: that one needs the offsets (kafkajs keeps the resolved ones
 * to itself, tulios/kafkajs#507, whose maintainer advises keeping the payload's
 * `commitOffsetsIfNecessary` for a commit at shutdown), retries for up to ~20 s, and would commit
 * partitions a rebalance gave to another member; kafkajs's `uncommittedOffsets` covers only the
 * member's current assignment, and a commit after a rebalance is refused by the broker (its
 * generation is gone), so the next owner's progress is never overwritten.
 */
export class OffsetCommitter {
  private member: MemberCommit | undefined;
  private lastCommit = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closingNow = false;
  private readonly intervalMs: number | undefined;
  private readonly log: Logger;
  private readonly groupId: string;

  constructor(policy: CommitPolicy, log: Logger, groupId: string) {
    this.intervalMs = policy === 'never' ? undefined : policy.intervalMs;
    this.log = log;
    this.groupId = groupId;
  }

  /** True once the consumer is stopping: a batch handler stops taking messages (the rest is read again by the next owner). */
  get closing(): boolean {
    return this.closingNow;
  }

  /**
   * The batch handler kafkajs runs: `handle`, then a commit when one is due. A handler that throws
   * has what it resolved before the error committed first (as kafkajs's `autoCommit` does), then
   * the error goes to kafkajs (which fetches the partition again from what is resolved).
   */
  eachBatch(handle: (payload: EachBatchPayload) => Promise<void>): (payload: EachBatchPayload) => Promise<void> {
    return async (payload) => {
      if (this.intervalMs !== undefined) this.member = { commit: payload.commitOffsetsIfNecessary, uncommitted: payload.uncommittedOffsets };
      this.inFlight++;
      try {
        await handle(payload);
      } catch (err) {
        await this.commitNow().catch((e: Error) => this.log.debug({ err: e, group: this.groupId }, 'resolved offsets not committed after a failed batch'));
        throw err;
      } finally {
        if (--this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      }
      await this.afterBatch();
    };
  }

  /**
   * kafkajs is about to rejoin the group (a rebalance, stale metadata): what the member resolved is
   * committed first, or the next owner of its partitions reads it again. kafkajs emits the event
   * just before it asks for the group's coordinator (a FindCoordinator round trip) and then
   * rejoins, so this commit is on the coordinator's connection before the JoinGroup request, and
   * the broker answers a connection's requests in order.
   */
  beforeRejoin(): void {
    this.commitNow().catch((err: Error) => this.log.warn({ err, group: this.groupId }, 'could not commit resolved offsets before rejoining the group; the next owner reads them again'));
  }

  /** The consumer is stopping: no batch takes further messages; once those in flight end, what they resolved is committed. */
  async close(): Promise<void> {
    this.closingNow = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.commitNow().catch((err: Error) => this.log.warn({ err, group: this.groupId }, 'could not commit resolved offsets at stop; the next owner reads them again'));
    clearTimeout(this.timer);
  }

  private async afterBatch(): Promise<void> {
    if (this.intervalMs === undefined) return;
    const due = this.lastCommit + this.intervalMs - Date.now();
    if (due <= 0) return this.commitNow();
    if (this.timer || this.closingNow) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.commitNow().catch((err: Error) => this.log.debug({ err, group: this.groupId }, 'resolved offsets not committed at the interval; the next batch or the stop commits them'));
    }, due);
    this.timer.unref();
  }

  /** Commits what the member resolved and has not committed (no request when there is nothing). */
  private async commitNow(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const member = this.member;
    if (!member) return;
    const offsets = member.uncommitted();
    if (offsets.topics.length === 0) return;
    this.lastCommit = Date.now();
    await member.commit(offsets);
  }
}
