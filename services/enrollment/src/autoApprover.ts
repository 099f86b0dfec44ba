import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { EnrollmentWriter } from './enrollmentWriter.ts';
import type { Clock } from './enrollmentWriter.ts';
import type { EnrollmentStore } from './store/enrollmentStore.ts';

const BATCH = 50;

/**
 * Approves PENDING enrollments of sandbox programs once their delay is over. Safe with several
 * replicas: each batch is locked with FOR UPDATE SKIP LOCKED, so a row is approved by one of them.
 */
export class AutoApprover {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly knex: Knex;
  private readonly store: EnrollmentStore;
  private readonly writer: EnrollmentWriter;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pollMs: number;

  constructor(opts: { knex: Knex; store: EnrollmentStore; writer: EnrollmentWriter; clock: Clock; logger: Logger; pollMs: number }) {
    this.knex = opts.knex;
    this.store = opts.store;
    this.writer = opts.writer;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'auto-approver' });
    this.pollMs = opts.pollMs;
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: Error) => this.logger.warn({ err }, 'auto-approval failed; will retry'))
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

  /** Approves every enrollment due now; returns how many. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.knex.transaction(async (trx) => {
        const due = await this.store.lockDueForAutoApproval(trx, this.clock(), BATCH);
        for (const e of due) await this.writer.apply(trx, e, { type: 'AUTO_APPROVE' }, { kind: 'SYSTEM', id: 'sandbox-auto-approval' });
        return due.length;
      });
      total += n;
      if (n < BATCH) break;
    }
    if (total > 0) this.logger.info({ approved: total }, 'sandbox enrollments approved');
    return total;
  }
}
