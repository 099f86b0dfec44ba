import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { PeriodicTask, untilDue, type Clock, type NextDueMs } from '@efs/runtime';
import type { EnrollmentContext } from '../context.ts';
import type { EnrollmentStore } from '../store/enrollmentStore.ts';
import type { EnrollmentWriter } from '../store/enrollmentWriter.ts';

const BATCH = 50;

/**
 * Approves PENDING enrollments of sandbox programs once their delay is over: it runs when the next
 * approval it knows of falls due, after this process's own commits (a new PENDING enrollment), and
 * at the latest every `pollMs` (what another replica wrote). Safe with several replicas: each
 * batch is locked with FOR UPDATE SKIP LOCKED, so a row is approved by one of them.
 */
export class AutoApprover {
  private readonly task: PeriodicTask;
  private readonly knex: Knex;
  private readonly store: EnrollmentStore;
  private readonly writer: EnrollmentWriter;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(opts: Pick<EnrollmentContext, 'knex' | 'store' | 'writer' | 'clock' | 'logger'> & { pollMs: number }) {
    this.knex = opts.knex;
    this.store = opts.store;
    this.writer = opts.writer;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'auto-approver' });
    this.task = new PeriodicTask({ run: () => this.runAndPlan(), pollMs: opts.pollMs, logger: this.logger, what: 'auto-approval' });
  }

  start(): void {
    this.task.start();
  }

  /** Something may be due sooner than planned (this process committed an enrollment change). */
  wake(): void {
    this.task.wake();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** Approves every enrollment due now; returns how many. */
  async runOnce(): Promise<number> {
    return (await this.apply(this.clock())).approved;
  }

  /** A run of the task: approves what is due and answers how long until the next known approval. */
  private async runAndPlan(): Promise<NextDueMs> {
    const started = this.clock();
    const { next } = await this.apply(started);
    return untilDue(next, started, this.clock());
  }

  private async apply(now: Date): Promise<{ approved: number; next: Date | null }> {
    // Most runs find nothing due: one indexed read instead of a locking transaction (PGlite's idle cost).
    const next = await this.store.nextAutoApprovalAt(this.knex);
    if (!next || next > now) return { approved: 0, next };
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
    return { approved: total, next: await this.store.nextAutoApprovalAt(this.knex) };
  }
}
