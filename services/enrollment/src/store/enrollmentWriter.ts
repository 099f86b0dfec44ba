import type { Knex } from '@efs/db';
import { EnrollmentsTopic, ProgramGroupsTopic, programGroupKey } from '@efs/contracts';
import type { Outbox } from '@efs/db';
import type { Clock } from '@efs/runtime';
import { toEnrollmentMessage, type Enrollment } from '../domain/enrollment.ts';
import { toGroupMessage, type ProgramGroup } from '../domain/group.ts';
import { autoApproveAt, transition, withoutDevice, type Trigger } from '../domain/lifecycle.ts';
import type { Actor, EnrollmentStore } from './enrollmentStore.ts';
import type { ReadModelStore } from './readModelStore.ts';

interface EnrollmentWriterDeps {
  store: EnrollmentStore;
  readModels: ReadModelStore;
  outbox: Outbox;
  clock: Clock;
}

/**
 * Every write of an enrollment goes through here, inside the caller's transaction: the row, its
 * history entry and the event announcing it commit together (transactional outbox).
 */
export class EnrollmentWriter {
  private readonly deps: EnrollmentWriterDeps;

  constructor(deps: EnrollmentWriterDeps) {
    this.deps = deps;
  }

  /** Inserts a new enrollment (DeviceAlreadyEnrolledError when a device is held) and records how it began. */
  async create(trx: Knex.Transaction, e: Enrollment, actor: Actor, reason: string): Promise<Enrollment> {
    await this.deps.store.insert(trx, e);
    await this.deps.store.recordHistory(trx, { enrollment_id: e.id, from_status: null, to_status: e.status, trigger: 'CREATE', actor, reason, at: e.created_at });
    await this.publish(trx, e);
    return e;
  }

  /**
   * Applies a trigger to an enrollment the caller has locked (`forUpdate`), so that the decision
   * is taken on the row as it is. Throws the state machine's AppError for a forbidden transition.
   */
  async apply(trx: Knex.Transaction, e: Enrollment, trigger: Trigger, actor: Actor): Promise<{ enrollment: Enrollment; changed: boolean }> {
    const now = this.deps.clock();
    const program = await this.deps.readModels.getProgram(trx, e.program_id);
    const result = transition(e, trigger, { now, minimumCommitmentMonths: program?.minimum_commitment_months ?? null });
    if (!result.changed) return { enrollment: e, changed: false };
    const next: Enrollment = {
      ...e,
      ...result.next,
      auto_approve_at: result.next.status === 'PENDING' ? autoApproveAt(program?.auto_approve_after_ms ?? null, now) : null,
      status_changed_at: now,
      updated_at: now,
    };
    await this.deps.store.update(trx, next);
    await this.deps.store.recordHistory(trx, { enrollment_id: e.id, from_status: e.status, to_status: next.status, trigger: trigger.type, actor, reason: result.reason, at: now });
    await this.publish(trx, next);
    return { enrollment: next, changed: true };
  }

  /**
   * Takes a deleted device out of an enrollment the caller has locked; one left with no device
   * ends. Announced either way, so that every reader stops counting the device.
   */
  async removeDevice(trx: Knex.Transaction, e: Enrollment, deviceId: string, actor: Actor): Promise<Enrollment> {
    const change = withoutDevice(e.device_ids, deviceId);
    if (!change) return e;
    const next = { ...e, device_ids: change.device_ids };
    return change.trigger ? (await this.apply(trx, next, change.trigger, actor)).enrollment : this.touch(trx, next);
  }

  /** Replaces the enrollment's groups; announces the change when there is one. */
  async setGroups(trx: Knex.Transaction, e: Enrollment, groupIds: readonly string[]): Promise<Enrollment> {
    const wanted = [...new Set(groupIds)].sort();
    if (wanted.length === e.group_ids.length && wanted.every((g, i) => g === e.group_ids[i])) return e;
    await this.deps.store.setGroups(trx, e, wanted);
    return this.touch(trx, { ...e, group_ids: wanted });
  }

  /** Announces an enrollment whose groups changed elsewhere (a group was deleted). */
  async touch(trx: Knex.Transaction, e: Enrollment): Promise<Enrollment> {
    const next = { ...e, updated_at: this.deps.clock() };
    await this.deps.store.update(trx, next);
    await this.publish(trx, next);
    return next;
  }

  /** Announces a program group's state, or its removal (groups are written by GroupStore, announced here with the enrollments). */
  async announceGroup(trx: Knex.Transaction, g: ProgramGroup, deleted = false): Promise<void> {
    await this.deps.outbox.enqueue(trx, ProgramGroupsTopic, programGroupKey(g.program_id, g.id), toGroupMessage(g, deleted));
  }

  private async publish(trx: Knex.Transaction, e: Enrollment): Promise<void> {
    await this.deps.outbox.enqueue(trx, EnrollmentsTopic, e.id, toEnrollmentMessage(e));
  }
}
