import type { Logger } from '@efs/logging';

/** What a run may answer: how long until the next work it knows of is due, in ms (≤ 0: due now); undefined when it knows of none. */
export type NextDueMs = number | undefined;

/** How soon work that was due when a run started and is still there after it is tried again (held by another replica, or failing). */
export const STILL_DUE_RETRY_MS = 1000;

/**
 * A run's answer from the next due time it read after its work (its own clock, which may be a
 * test's): none known; due already when the run started, so not done by it (another replica holds
 * it, or it fails): again in STILL_DUE_RETRY_MS, not in a loop; else the time until it.
 */
export function untilDue(next: Date | null, startedAt: Date, now: Date): NextDueMs {
  if (!next) return undefined;
  if (next <= startedAt) return STILL_DUE_RETRY_MS;
  return next.getTime() - now.getTime();
}

export interface PeriodicTaskOptions {
  /** Does what is due; answers how long until the next known due work (see NextDueMs). */
  run: () => Promise<NextDueMs | void>;
  /**
   * The longest sleep between runs: how soon work the process was not told of is found (written by
   * another replica or the CLI, or due by a clock the task cannot see ahead of, as a test's).
   */
  pollMs: number;
  /**
   * The shortest gap between runs, whatever woke it (a burst of `wake()`s: every commit of a
   * service wakes its schedulers), 250 ms by default: under load at most what a fixed 250 ms poll
   * cost.
   */
  minGapMs?: number;
  logger: Logger;
  what: string;
}

/**
 * Runs `run` once at start (or at the time `start` is given), then whenever the work it knows of
 * falls due, when `wake()` says something may be due now (this process's own commit), and at the
 * latest every `pollMs`. Runs never overlap and are at least `minGapMs` apart, so an idle task
 * costs one run per `pollMs` and a busy one at most one per `minGapMs`. A failure is logged and
 * retried at the next run. `stop()` waits for the run in progress.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (epoch ms); undefined when none is set. */
  private timerAt: number | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private lastStart = 0;
  private wokenWhileRunning = false;
  private readonly opts: PeriodicTaskOptions;
  private readonly minGapMs: number;

  constructor(opts: PeriodicTaskOptions) {
    this.opts = opts;
    this.minGapMs = Math.min(opts.minGapMs ?? 250, opts.pollMs);
  }

  /** Starts the runs: the first at once, or in `firstInMs`. */
  start(firstInMs = 0): void {
    this.stopped = false;
    this.schedule(firstInMs);
  }

  /** Something may be due now: runs at once, or when the run in progress (or the minimum gap) allows. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wokenWhileRunning = true;
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.running;
  }

  /** Sets the timer to fire in `ms` (never sooner than the minimum gap after the last start), unless it fires sooner already. */
  private schedule(ms: number): void {
    const at = Math.max(Date.now() + Math.max(0, ms), this.lastStart + this.minGapMs);
    if (this.timerAt !== undefined && this.timerAt <= at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), at - Date.now());
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = undefined;
    if (this.stopped) return;
    this.lastStart = Date.now();
    this.wokenWhileRunning = false;
    const { run, pollMs, logger, what } = this.opts;
    let next: number = pollMs;
    this.running = run()
      .then((due) => {
        if (typeof due === 'number' && Number.isFinite(due)) next = Math.min(pollMs, due);
      })
      .catch((err: Error) => logger.warn({ err }, `${what} failed; will retry`))
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.wokenWhileRunning ? 0 : next);
      });
  }
}
