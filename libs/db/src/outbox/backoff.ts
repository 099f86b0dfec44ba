import type { Logger } from '@efs/logging';
import type { OutboxRow } from './quarantine.ts';

export interface BackoffOptions {
  /** Failures of a row while other rows publish fine, before it is quarantined. */
  maxAttempts: number;
  /** First wait before a failed row (or, in an outage, the whole relay) tries again; doubles up to maxBackoffMs. */
  retryBaseMs: number;
  maxBackoffMs: number;
}

/** A row the transport refused, remembered between passes (not across restarts: a restart starts its count again). */
interface Failure {
  topic: string;
  key: string;
  /** Failures counted against the row: those while other rows were published, so not an outage. */
  counted: number;
  failures: number;
  lastFailureAt: number;
  nextAt: number;
  error: string;
}

/** The head rows of keys the transport refused, each waiting for its retry with backoff. */
export class RowBackoff {
  private readonly failing = new Map<string, Failure>();
  private readonly opts: BackoffOptions;

  constructor(opts: BackoffOptions) {
    this.opts = opts;
  }

  /** The rows (topic and key) still waiting for their retry at `now`. */
  waiting(now: number): { topic: string; key: string }[] {
    return [...this.failing.values()].filter((f) => f.nextAt > now);
  }

  /** The row was published: it fails no more. */
  published(id: string): void {
    this.failing.delete(id);
  }

  /**
   * Records a failure of the head row of its key. A failure counts against the row when other
   * rows got through meanwhile (`othersWentThrough`, or a success since its last failure): the
   * transport works. Answers why to quarantine it once it counted `maxAttempts` failures, else
   * whether this was its first failure.
   */
  failed(row: OutboxRow, err: Error, othersWentThrough: boolean, lastSuccessAt: number): { quarantine: string; attempts: number } | { quarantine?: undefined; first: boolean } {
    const now = Date.now();
    const f = this.failing.get(row.id) ?? { topic: row.topic, key: row.key, counted: 0, failures: 0, lastFailureAt: 0, nextAt: 0, error: '' };
    if (othersWentThrough || (f.failures > 0 && lastSuccessAt > f.lastFailureAt)) f.counted++;
    f.failures++;
    f.lastFailureAt = now;
    f.nextAt = now + Math.min(this.opts.maxBackoffMs, this.opts.retryBaseMs * 2 ** (f.failures - 1));
    f.error = `${err.name}: ${err.message}`;
    this.failing.set(row.id, f);
    if (f.counted >= this.opts.maxAttempts) {
      this.failing.delete(row.id);
      return { quarantine: `publishing failed ${f.failures} times while other rows went through; last error: ${f.error}`, attempts: f.failures };
    }
    return { first: f.failures === 1 };
  }
}

/** The whole relay's pause while nothing goes through (the broker is down): backoff, said once, then once a minute. */
export class OutagePause {
  private pausedUntil = 0;
  private pauseStep = 0;
  private outageSince: number | undefined;
  private outageLoggedAt = 0;
  private readonly opts: BackoffOptions;
  private readonly logger: Logger;

  constructor(opts: BackoffOptions, logger: Logger) {
    this.opts = opts;
    this.logger = logger;
  }

  /** Whether the relay waits out an outage at `now`. */
  paused(now: number): boolean {
    return now < this.pausedUntil;
  }

  /** The relay cannot publish anything: pause with backoff, and say so once (then once a minute). */
  outage(err: Error): void {
    const now = Date.now();
    this.pausedUntil = now + Math.min(this.opts.maxBackoffMs, this.opts.retryBaseMs * 2 ** this.pauseStep);
    this.pauseStep++;
    if (this.outageSince === undefined) {
      this.outageSince = now;
      this.outageLoggedAt = now;
      this.logger.warn({ err, retry_in_ms: this.pausedUntil - now }, 'outbox relay cannot publish; pausing and retrying with backoff');
      // The poll timer kicks the relay again once the pause is over.
    } else if (now - this.outageLoggedAt >= 60_000) {
      this.outageLoggedAt = now;
      this.logger.warn({ err, since: new Date(this.outageSince).toISOString(), attempts: this.pauseStep }, 'outbox relay still cannot publish');
    }
  }

  recovered(): void {
    if (this.outageSince !== undefined) this.logger.info({ after_ms: Date.now() - this.outageSince }, 'outbox relay publishing again');
    this.outageSince = undefined;
    this.pauseStep = 0;
    this.pausedUntil = 0;
  }
}
