/** Where a partition's messages end, as the broker (or the in-process history) told at one moment. */
export interface PartitionEnd {
  partition: number;
  /** The first offset still held (a partition with low = high holds nothing to read). */
  low: number;
  /** The offset the next message will get. */
  high: number;
}

/**
 * How far one subscription has handled its topic, partition by partition, for `caughtUp`: the
 * offset after the last message handled (messages of a partition are handled in offset order), and
 * whether a message of it could not be handled (then the read model misses it, and the
 * subscription never counts as caught up again in this process).
 */
export class TopicProgress {
  private readonly next = new Map<number, number>();
  private readonly broken = new Set<number>();
  private readonly waiters = new Set<() => void>();

  /** A message was handled (applied to the read model). */
  handled(partition: number, offset: number): void {
    if (offset + 1 > (this.next.get(partition) ?? 0)) this.next.set(partition, offset + 1);
    this.notify();
  }

  /** A message could not be handled (dead-lettered): what the partition holds is no longer all in the model. */
  failed(partition: number): void {
    this.broken.add(partition);
    this.notify();
  }

  /** True once every message below `ends` is handled, false when one of them never will be, undefined while waiting. */
  reached(ends: readonly PartitionEnd[]): boolean | undefined {
    let all = true;
    for (const e of ends) {
      if (this.broken.has(e.partition)) return false;
      if (e.low < e.high && (this.next.get(e.partition) ?? 0) < e.high) all = false;
    }
    return all ? true : undefined;
  }

  /** Resolves as `reached` once it is decided, or false at `timeoutMs`. */
  async waitFor(ends: readonly PartitionEnd[], timeoutMs: number): Promise<boolean> {
    const now = this.reached(ends);
    if (now !== undefined) return now;
    return new Promise<boolean>((resolve) => {
      const check = () => {
        const r = this.reached(ends);
        if (r !== undefined) done(r);
      };
      const timer = setTimeout(() => done(false), Math.max(1, timeoutMs));
      const done = (r: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(r);
      };
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}

/**
 * The result of a lookup started after the caller asked, shared by every caller asking meanwhile:
 * at most one lookup runs at a time; who asks while one runs gets the next, which starts when it
 * ends (the one running may have been sent before they asked). Under load one broker request
 * answers every caller of a round trip.
 */
export class FreshLookup<T> {
  private running: Promise<T> | undefined;
  private queued: Promise<T> | undefined;
  private readonly run: () => Promise<T>;

  constructor(run: () => Promise<T>) {
    this.run = run;
  }

  next(): Promise<T> {
    if (!this.running) return this.start();
    if (!this.queued) {
      const settled = this.running.then(
        () => undefined,
        () => undefined,
      );
      this.queued = settled.then(() => {
        this.queued = undefined;
        return this.start();
      });
    }
    return this.queued;
  }

  private start(): Promise<T> {
    const p = this.run().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }
}
