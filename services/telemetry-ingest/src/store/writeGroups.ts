/**
 * Writes handed in at the same time go into one transaction (group commit): the readings of the
 * partition batches of one fetch (kafkajs hands a fetch's batches to its workers together and
 * fetches again only once all are handled) and whatever is handed in while a transaction runs.
 * Each transaction costs its statements, its commit and COPY's set-up on the partitioned table
 * whatever it carries (~0.6 ms of the Postgres backend measured, against ~5 ms per 1,000 rows of
 * COPY itself), and a batch per partition carried ~200 readings under load.
 *
 * A caller's promise settles when the transaction holding its items has committed (or failed), so
 * its offsets are resolved only after its readings are stored, as before. A group whose
 * transaction fails on something of its own data is written again a caller at a time, so a batch
 * that cannot be written fails only its own caller (who retries and dead-letters as before), not
 * the batches it was grouped with; a failure `splits` refuses (the database unreachable) is every
 * caller's answer at once, instead of a wait per caller in turn (with 16 callers and 10 s
 * connection timeouts, minutes without a heartbeat to the consumer group). At most `writers` transactions at a time (each its own connection): what one fetch
 * brings beyond `maxItems` readings is written in parallel rather than one transaction after the
 * other (the consumer fetches again only once the whole fetch is written).
 */
export class WriteGroups<T> {
  private readonly write: (items: readonly T[]) => Promise<void>;
  private readonly maxItems: number;
  private readonly writers: number;
  private readonly splits: (err: unknown) => boolean;
  private readonly queue: { items: readonly T[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private active = 0;

  /**
   * `write` writes its items in one transaction; a group holds at most `maxItems` items (a single
   * hand-in may hold more); at most `writers` groups are written at the same time. `splits` says
   * whether a failed group is written again a hand-in at a time (default: always).
   */
  constructor(opts: { write: (items: readonly T[]) => Promise<void>; maxItems: number; writers: number; splits?: (err: unknown) => boolean }) {
    this.write = opts.write;
    this.splits = opts.splits ?? (() => true);
    this.maxItems = opts.maxItems;
    this.writers = opts.writers;
  }

  /** Settles once `items` are written (with those handed in at the same time). */
  add(items: readonly T[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      if (this.active >= this.writers) return;
      this.active++;
      // A turn of the event loop for the other batches of the same fetch to be handed in.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.writeGroup(this.take());
    this.active--;
  }

  /** Whole hand-ins from the front of the queue, at most maxItems items (at least one hand-in). */
  private take(): typeof this.queue {
    let n = this.queue[0]!.items.length;
    let k = 1;
    while (k < this.queue.length && n + this.queue[k]!.items.length <= this.maxItems) n += this.queue[k++]!.items.length;
    return this.queue.splice(0, k);
  }

  private async writeGroup(group: typeof this.queue): Promise<void> {
    if (group.length > 1) {
      try {
        await this.write(group.flatMap((g) => g.items));
        for (const g of group) g.resolve();
        return;
      } catch (err) {
        if (!this.splits(err)) {
          for (const g of group) g.reject(err);
          return;
        }
        // Written again one by one below: each caller gets its own outcome.
      }
    }
    for (const g of group) {
      try {
        await this.write(g.items);
        g.resolve();
      } catch (err) {
        g.reject(err);
      }
    }
  }
}
