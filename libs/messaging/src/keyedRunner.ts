/**
 * How many requests a process handles at once per served target (waiting behind an earlier
 * request of their key, or running). Enough to keep a service's database pool busy; more only
 * queues inside the process instead of in the request topic.
 */
export const REQUEST_CONCURRENCY = 64;

/**
 * Runs a served target's requests: those of different keys at the same time, those of one key
 * (a site) one after the other in the order they were admitted, at most `limit` admitted at once.
 * Both transports serve through it, so a site's requests keep their order on either, and a slow
 * request holds up only the later requests of its own key.
 */
export class KeyedRunner {
  /** The last admitted task of each key that has one admitted. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly admitted = new Set<Promise<void>>();
  /** Callers waiting for a place, first come first served. */
  private readonly waiting: (() => void)[] = [];
  /** Places handed to a waiter that has not resumed yet: nobody else may take them meanwhile. */
  private handedOver = 0;
  private readonly limit: number;
  private readonly onError: (err: unknown) => void;

  constructor(opts: { limit?: number; onError: (err: unknown) => void }) {
    this.limit = opts.limit ?? REQUEST_CONCURRENCY;
    this.onError = opts.onError;
  }

  /**
   * Admits a task as soon as fewer than `limit` are, in the order the callers came (resolves
   * then); the task starts once every task admitted before it with the same key has ended (a task
   * without a key waits behind none).
   * `done` settles when it has ended (a failure goes to onError, never to the next task of the
   * key). `wanted`, asked after any wait, may decline the place (the caller no longer owns the
   * work, or is stopping): then nothing is admitted and `admit` answers undefined.
   */
  async admit(key: string | undefined, task: () => Promise<void>, wanted?: () => boolean): Promise<{ done: Promise<void> } | undefined> {
    if (this.admitted.size + this.handedOver >= this.limit || this.waiting.length > 0) {
      // A place is handed over by the task that ends (handedOver), so a caller arriving
      // meanwhile cannot take it and overtake the waiters: admission stays in arrival order.
      await new Promise<void>((r) => this.waiting.push(r));
      this.handedOver--;
      if (wanted && !wanted()) {
        this.release();
        return undefined;
      }
    }
    const before = (key === undefined ? undefined : this.tails.get(key)) ?? Promise.resolve();
    const done = before.then(task).catch(this.onError);
    if (key !== undefined) this.tails.set(key, done);
    this.admitted.add(done);
    void done.then(() => {
      this.admitted.delete(done);
      if (key !== undefined && this.tails.get(key) === done) this.tails.delete(key);
      this.release();
    });
    return { done };
  }

  /** A place became free: it goes to the first waiter, if any. */
  private release(): void {
    const next = this.waiting.shift();
    if (!next) return;
    this.handedOver++;
    next();
  }

  /** Resolves once every task admitted so far (and any admitted meanwhile) has ended. */
  async idle(): Promise<void> {
    while (this.admitted.size > 0) await Promise.allSettled([...this.admitted]);
  }

  /** Tasks admitted and not yet ended. */
  get size(): number {
    return this.admitted.size;
  }
}
