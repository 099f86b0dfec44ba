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
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;
  private readonly onError: (err: unknown) => void;

  constructor(opts: { limit?: number; onError: (err: unknown) => void }) {
    this.limit = opts.limit ?? REQUEST_CONCURRENCY;
    this.onError = opts.onError;
  }

  /**
   * Admits a task as soon as fewer than `limit` are (resolves then); the task starts once every
   * task admitted before it with the same key has ended. `done` settles when it has ended (a
   * failure goes to onError, never to the next task of the key).
   */
  async admit(key: string, task: () => Promise<void>): Promise<{ done: Promise<void> }> {
    // The check and the admission happen in one step (no await between them): never over the limit.
    while (this.admitted.size >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    const before = this.tails.get(key) ?? Promise.resolve();
    const done = before.then(task).catch(this.onError);
    this.tails.set(key, done);
    this.admitted.add(done);
    void done.then(() => {
      this.admitted.delete(done);
      if (this.tails.get(key) === done) this.tails.delete(key);
      this.waiting.shift()?.();
    });
    return { done };
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
