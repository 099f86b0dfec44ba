import type { Logger } from '@efs/logging';

/**
 * Runs `run` every `pollMs` (the next run is scheduled when one finishes, so runs never overlap);
 * a failure is logged and retried at the next tick. `stop()` waits for the run in progress.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly run: () => Promise<unknown>;
  private readonly pollMs: number;
  private readonly logger: Logger;
  private readonly what: string;

  constructor(opts: { run: () => Promise<unknown>; pollMs: number; logger: Logger; what: string }) {
    this.run = opts.run;
    this.pollMs = opts.pollMs;
    this.logger = opts.logger;
    this.what = opts.what;
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.run()
        .then(() => undefined)
        .catch((err: Error) => this.logger.warn({ err }, `${this.what} failed; will retry`))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
        });
    };
    this.timer = setTimeout(tick, this.pollMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
