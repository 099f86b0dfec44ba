import { AsyncLocalStorage } from 'node:async_hooks';

/** What a batched write answered for one of its items. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface GroupCommitOptions<I, R> {
  /**
   * Writes several items at once (one statement or transaction) and answers each item's outcome,
   * in the items' order; rejects when the write failed as a whole (then nothing of it is stored).
   */
  writeAll(items: readonly I[]): Promise<readonly ItemOutcome<R>[]>;
  /**
   * Writes one item alone: a batch of one, and each item of a batch whose write failed as a whole
   * with an error `retryAlone` accepts. Runs in the async context of the item's `submit` (its
   * request's deadline and trace).
   */
  writeOne(item: I): Promise<R>;
  /**
   * Whether a batch that failed whole with `err` is written again item by item (one item's unique
   * conflict: the others are fine alone). Any other error (a lost connection, a timeout) is every
   * item's answer, without writing them again one by one against a database that is failing.
   */
  retryAlone(err: unknown): boolean;
  /** Most items in one batch. */
  maxItems: number;
  /**
   * Most writes in flight at once (default 1), each taking the next batch from the same queue:
   * what one burst brings beyond a batch is written in parallel rather than one write after the other.
   */
  writers?: number;
  /**
   * Whether a write that starts when a writer is free waits a turn of the event loop first
   * (default false: it starts at once, alone), for what the same turn submits to join it: the
   * partition batches kafkajs hands its workers together from one fetch.
   */
  joinSameTurn?: boolean;
  /** Most weight (rows, bound parameters) in one batch; a batch always takes at least one item. */
  maxWeight?: number;
  weightOf?(item: I): number;
  /**
   * When an item's caller stops waiting (epoch ms), and what it is answered if it is still waiting
   * for its turn then: a write in flight that hangs does not hold the callers queued behind it.
   */
  deadlineOf?(item: I): number | undefined;
  expired?(item: I): unknown;
}

interface Waiting<I, R> {
  item: I;
  resolve(value: R): void;
  reject(err: unknown): void;
  /** Runs a function in the async context `submit` was called in. */
  context<T>(fn: () => T): T;
  /** Answers the item at its deadline while it still waits for its turn. */
  timer: NodeJS.Timeout | undefined;
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
 * Group commit: at most `writers` writes in flight at a time (one by default); what is submitted
 * meanwhile waits and goes in the next write, together. Nothing waits on a timer: an item submitted
 * while a writer is free is written at once, alone, as it would be without batching (or, with
 * `joinSameTurn`, a turn of the event loop later, with what the same turn submitted). A batch whose write fails whole with an
 * error `retryAlone` accepts (one item's unique conflict) is written again item by item, in the
 * order submitted, so every caller gets the answer it would have got alone; any other failure is
 * every item's answer. An item still waiting at its deadline (`deadlineOf`) is answered then
 * (`expired`) and never written.
 *
 * What it trades: `writers` writes at a time per process, so a slow write delays the items queued behind
 * it (up to their deadlines), and a batch with a conflict costs one more statement per item in it.
 * The queue holds what the caller admits: bound it there (the request router's concurrency).
 */
export class GroupCommit<I, R> {
  private readonly waiting: Waiting<I, R>[] = [];
  /** Writers running (each a loop taking batches until none is waiting), at most `writers`. */
  private active = 0;
  private readonly writers: number;
  private readonly opts: GroupCommitOptions<I, R>;
  /** The context the writer was made in (no request's): batches are not written under their first submitter's request. */
  private readonly neutral: <T>(fn: () => T) => T;

  constructor(opts: GroupCommitOptions<I, R>) {
    this.opts = opts;
    this.writers = opts.writers ?? 1;
    this.neutral = AsyncLocalStorage.snapshot();
  }

  /** Writes `item`, alone or in a batch; resolves or rejects with what its write answered for it. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const w: Waiting<I, R> = { item, resolve, reject, context: AsyncLocalStorage.snapshot(), timer: undefined };
      const deadline = this.opts.deadlineOf?.(item);
      const waits = this.active >= this.writers || this.opts.joinSameTurn === true;
      if (deadline !== undefined && waits) {
        // Fires just past the deadline: a deadline is passed once the clock is beyond it.
        w.timer = setTimeout(() => {
          const i = this.waiting.indexOf(w);
          if (i < 0) return;
          this.waiting.splice(i, 1);
          w.reject(this.opts.expired ? this.opts.expired(item) : new Error('deadline passed before the write'));
        }, Math.max(0, deadline - Date.now() + 1));
      }
      this.waiting.push(w);
      if (this.active >= this.writers) return;
      this.active++;
      if (this.opts.joinSameTurn) this.neutral(() => setImmediate(() => void this.writeWaiting()));
      else this.neutral(() => void this.writeWaiting());
    });
  }

  /** One writer: batches from the front of the queue until none is waiting. */
  private async writeWaiting(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        let batch: Waiting<I, R>[] = [];
        try {
          batch = takeBatch(this.waiting, this.opts.maxItems, this.opts.weightOf && ((w) => this.opts.weightOf!(w.item)), this.opts.maxWeight);
          for (const w of batch) clearTimeout(w.timer);
          if (batch.length === 1) await this.alone(batch[0]!);
          else await this.together(batch);
        } catch (err) {
          // A bug of the caller's callbacks (weightOf, an answer that is not a list): its batch is answered, the writer goes on.
          const taken = batch.length > 0 ? batch : this.waiting.splice(0, this.waiting.length);
          for (const w of taken) w.reject(err);
        }
      }
    } finally {
      this.active--;
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
    } catch (err) {
      if (!this.opts.retryAlone(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
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
