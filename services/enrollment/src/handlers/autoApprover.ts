import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { PeriodicTask } from '@efs/runtime';
import type { EnrollmentWriter } from '../store/enrollmentWriter.ts';
import type { Clock } from '../store/enrollmentWriter.ts';
import type { EnrollmentStore } from '../store/enrollmentStore.ts';

const BATCH = 50;

/**
 * Approves PENDING enrollments of sandbox programs once their delay is over. Safe with several
 * replicas: each batch is locked with FOR UPDATE SKIP LOCKED, so a row is approved by one of them.
 */
export class AutoApprover {
  private readonly task: PeriodicTask;
  private readonly knex: Knex;
  private readonly store: EnrollmentStore;
  private readonly writer: EnrollmentWriter;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; store: EnrollmentStore; writer: EnrollmentWriter; clock: Clock; logger: Logger; pollMs: number }) {
    this.knex = opts.knex;
    this.store = opts.store;
    this.writer = opts.writer;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'auto-approver' });
    this.task = new PeriodicTask({ run: () => this.runOnce(), pollMs: opts.pollMs, logger: this.logger, what: 'auto-approval' });
  }

  start(): void {
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** Approves every enrollment due now; returns how many. */
  async runOnce(): Promise<number> {
    // Most ticks find nothing: one indexed read instead of a locking transaction (PGlite's idle cost).
    if (!(await this.store.autoApprovalDue(this.knex, this.clock()))) return 0;
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
