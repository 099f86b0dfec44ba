import type { Knex } from '@efs/db';
import { EnrollmentsTopic } from '@efs/contracts';
import type { Outbox } from '@efs/db';
import { toEnrollmentMessage, type Enrollment } from './domain/enrollment.ts';
import { autoApproveAt, transition, type Trigger } from './domain/lifecycle.ts';
import type { Actor, EnrollmentStore } from './store/enrollmentStore.ts';
import type { ReadModelStore } from './store/readModelStore.ts';

export type Clock = () => Date;

/**
 * Every write of an enrollment goes through here, inside the caller's transaction: the row, its
 * history entry and the event announcing it commit together (transactional outbox).
 */
export class EnrollmentWriter {
  private readonly store: EnrollmentStore;
  private readonly readModels: ReadModelStore;
  private readonly outbox: Outbox;
  private readonly clock: Clock;

  constructor(opts: { store: EnrollmentStore; readModels: ReadModelStore; outbox: Outbox; clock: Clock }) {
    this.store = opts.store;
    this.readModels = opts.readModels;
    this.outbox = opts.outbox;
    this.clock = opts.clock;
  }

  /** Inserts a new enrollment (DeviceAlreadyEnrolledError when a device is held) and records how it began. */
  async create(trx: Knex.Transaction, e: Enrollment, actor: Actor, reason: string): Promise<Enrollment> {
    await this.store.insert(trx, e);
    await this.store.recordHistory(trx, { enrollment_id: e.id, from_status: null, to_status: e.status, trigger: 'CREATE', actor, reason, at: e.created_at });
    await this.publish(trx, e);
    return e;
  }

  /**
   * Applies a trigger to an enrollment the caller has locked (`forUpdate`), so that the decision
   * is taken on the row as it is. Throws the state machine's AppError for a forbidden transition.
   */
  async apply(trx: Knex.Transaction, e: Enrollment, trigger: Trigger, actor: Actor): Promise<{ enrollment: Enrollment; changed: boolean }> {
    const now = this.clock();
    const program = await this.readModels.getProgram(trx, e.program_id);
    const result = transition(e, trigger, { now, minimumCommitmentMonths: program?.minimum_commitment_months ?? null });
    if (!result.changed) return { enrollment: e, changed: false };
    const next: Enrollment = {
      ...e,
      ...result.next,
      auto_approve_at: result.next.status === 'PENDING' ? autoApproveAt(program?.auto_approve_after_ms ?? null, now) : null,
      status_changed_at: now,
      updated_at: now,
    };
    await this.store.update(trx, next);
    await this.store.recordHistory(trx, { enrollment_id: e.id, from_status: e.status, to_status: next.status, trigger: trigger.type, actor, reason: result.reason, at: now });
    await this.publish(trx, next);
    return { enrollment: next, changed: true };
  }

  /** Replaces the enrollment's groups; announces the change when there is one. */
  async setGroups(trx: Knex.Transaction, e: Enrollment, groupIds: readonly string[]): Promise<Enrollment> {
    const wanted = [...new Set(groupIds)].sort();
    if (wanted.length === e.group_ids.length && wanted.every((g, i) => g === e.group_ids[i])) return e;
    await this.store.setGroups(trx, e, wanted);
    return this.touch(trx, { ...e, group_ids: wanted });
  }

  /** Announces an enrollment whose groups changed elsewhere (a group was deleted). */
  async touch(trx: Knex.Transaction, e: Enrollment): Promise<Enrollment> {
    const next = { ...e, updated_at: this.clock() };
    await this.store.update(trx, next);
    await this.publish(trx, next);
    return next;
  }

  private async publish(trx: Knex.Transaction, e: Enrollment): Promise<void> {
    await this.outbox.enqueue(trx, EnrollmentsTopic, e.id, toEnrollmentMessage(e));
  }
}
