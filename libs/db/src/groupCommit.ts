import { AsyncLocalStorage } from 'node:async_hooks';

/** What a batched write answered for one of its items. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<I, R> {
  /**
   * Writes several items at once (one statement or transaction) and answers each item's outcome,
   * in the items' order; rejects when the write failed as a whole (then nothing of it is stored).
   */
  writeAll(items: readonly I[]): Promise<readonly ItemOutcome<R>[]>;
  /**
   * Writes one item alone: a batch of one, and each item of a batch whose write failed as a whole.
   * Runs in the async context of the item's `submit` (its request's deadline and trace).
   */
  writeOne(item: I): Promise<R>;
  /** Most items in one batch. */
  maxItems: number;
  /** Most weight (rows, bound parameters) in one batch; a batch always takes at least one item. */
  maxWeight?: number;
  weightOf?(item: I): number;
}

interface Waiting<I, R> {
  item: I;
  resolve(value: R): void;
  reject(err: unknown): void;
  /** Runs a function in the async context `submit` was called in. */
  context<T>(fn: () => T): T;
}

/**
 * The next batch: items from the front of `waiting`, in order, up to `maxItems` and `maxWeight`
 * (at least one item however heavy). Removes them from `waiting`.
 */
export function takeBatch<T>(waiting: T[], maxItems: number, weightOf: (item: T) => number = () => 1, maxWeight = Number.POSITIVE_INFINITY): T[] {
  let n = 0;
  let weight = 0;
  while (n < waiting.length && n < maxItems) {
    weight += weightOf(waiting[n]!);
    if (n > 0 && weight > maxWeight) break;
    n++;
  }
  return waiting.splice(0, n);
}

/**
 * Group commit: one write in flight at a time; what is submitted meanwhile waits and goes in the
 * next write, together. Nothing waits on a timer: an item submitted while nothing is in flight is
 * written at once, alone, as it would be without batching. A batch whose write fails as a whole
 * (one item's unique conflict, a deadline) is written again item by item, in the order submitted,
 * so every caller gets the answer it would have got alone and no item fails another.
 */
export class GroupCommit<I, R> {
  private readonly waiting: Waiting<I, R>[] = [];
  private writing = false;
  private readonly opts: GroupCommitOptions<I, R>;

  constructor(opts: GroupCommitOptions<I, R>) {
    this.opts = opts;
  }

  /** Writes `item`, alone or in a batch; resolves or rejects with what its write answered for it. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject, context: AsyncLocalStorage.snapshot() });
      if (!this.writing) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = takeBatch(this.waiting, this.opts.maxItems, this.opts.weightOf && ((w) => this.opts.weightOf!(w.item)), this.opts.maxWeight);
        if (batch.length === 1) await this.alone(batch[0]!);
        else await this.together(batch);
      }
    } finally {
      this.writing = false;
    }
  }

  private async alone(w: Waiting<I, R>): Promise<void> {
    try {
      w.resolve(await w.context(() => this.opts.writeOne(w.item)));
    } catch (err) {
      w.reject(err);
    }
  }

  private async together(batch: readonly Waiting<I, R>[]): Promise<void> {
    let outcomes: readonly ItemOutcome<R>[];
    try {
      outcomes = await this.opts.writeAll(batch.map((w) => w.item));
    } catch {
      // Nothing of the batch is stored: each item again on its own, so it gets its own answer.
      for (const w of batch) await this.alone(w);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i];
      if (!o) w.reject(new Error(`writeAll answered ${outcomes.length} outcomes for ${batch.length} items`));
      else if (o.ok) w.resolve(o.value);
      else w.reject(o.error);
    });
  }
}
