import type { EnrollmentStatusType } from '@efs/api';
import { Errors, type AppError } from '@efs/errors';

/**
 * The enrollment state machine, the only place that decides how an enrollment's status moves
 * (decisions.md, Enrollments, Transitions). Pure: the caller passes the time and the program's
 * minimum commitment, and persists what comes back.
 */

/** What may happen to an enrollment. */
export type Trigger =
  /** The utility approves (PATCH status ACTIVE). */
  | { type: 'APPROVE'; reason?: string | null }
  /** A sandbox program approves on its own after its delay. */
  | { type: 'AUTO_APPROVE' }
  /** The utility rejects (PATCH status REJECTED, with a reason). */
  | { type: 'REJECT'; reason: string }
  /** The utility asks the end user for more (PATCH status NEEDS_ACTION, with a reason). */
  | { type: 'REQUEST_ACTION'; reason: string }
  /** The utility ends an ACTIVE enrollment (PATCH status UNENROLLED). */
  | { type: 'END'; reason?: string | null }
  /** The end user deletes the enrollment (cancellation or unenrollment). */
  | { type: 'UNENROLL' }
  /** The end user completed what was asked: the site was updated or a supplement arrived. */
  | { type: 'INFO_PROVIDED'; what: 'site' | 'supplement' }
  /** The enrollment's last device was deleted: nothing is left to enroll. */
  | { type: 'LAST_DEVICE_DELETED' };

export type TriggerType = Trigger['type'];

/** The part of an enrollment the state machine reads and writes. */
export interface LifecycleState {
  status: EnrollmentStatusType;
  status_reason: string | null;
  enrolled_at: Date | null;
  unenrolled_at: Date | null;
}

export interface TransitionContext {
  now: Date;
  /** The program's minimum commitment; null when none (or unknown). */
  minimumCommitmentMonths: number | null;
}

export type TransitionResult =
  /** The status moved; `reason` is what the history records. */
  | { changed: true; next: LifecycleState; reason: string }
  /** Nothing to do: a repeat of what already happened (the request still succeeds). */
  | { changed: false; next: LifecycleState };

/** Every status; the terminal ones free the devices for a new enrollment in the program. */
export const Statuses: readonly EnrollmentStatusType[] = ['PENDING', 'ACTIVE', 'NEEDS_ACTION', 'REJECTED', 'UNENROLLED'];
export const TerminalStatuses: readonly EnrollmentStatusType[] = ['REJECTED', 'UNENROLLED'];
export const isTerminal = (s: EnrollmentStatusType): boolean => TerminalStatuses.includes(s);
/** The statuses of an enrollment the user is in: what a site's enrollment list shows unless asked otherwise. */
export const CurrentStatuses: readonly EnrollmentStatusType[] = Statuses.filter((s) => !isTerminal(s));

/**
 * `date` plus whole calendar months in UTC; a day that the target month lacks becomes its last
 * day (Jan 31 + 1 month = Feb 28 or 29).
 */
export function addMonths(date: Date, months: number): Date {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const d = new Date(date.getTime());
  d.setUTCFullYear(y, m, Math.min(date.getUTCDate(), lastDay));
  return d;
}

/** The first moment an ACTIVE enrollment may be ended by its user, or null when any time. */
export function commitmentEndsAt(enrolledAt: Date | null, minimumCommitmentMonths: number | null): Date | null {
  if (enrolledAt === null || minimumCommitmentMonths === null || minimumCommitmentMonths <= 0) return null;
  return addMonths(enrolledAt, minimumCommitmentMonths);
}

/** A refused move, in the API's words: the status asked for and the one the enrollment has (triggers are internal names). */
const forbidden = (from: EnrollmentStatusType, to: EnrollmentStatusType, what: string): AppError =>
  Errors.CONFLICT(`An enrollment that is ${from} cannot be ${what}`, { errors: [{ message: `status ${to} is not allowed for an enrollment that is ${from}`, path: 'status' }] });

const unchanged = (s: LifecycleState): TransitionResult => ({ changed: false, next: { ...s } });

/**
 * Applies a trigger to an enrollment's state. Returns the next state, or `changed: false` when
 * the trigger repeats what already happened; throws AppError (CONFLICT or
 * MINIMUM_COMMITMENT_NOT_MET) for a forbidden transition.
 */
export function transition(state: LifecycleState, trigger: Trigger, ctx: TransitionContext): TransitionResult {
  const { status } = state;
  switch (trigger.type) {
    case 'APPROVE':
    case 'AUTO_APPROVE': {
      if (status === 'ACTIVE') return unchanged(state);
      if (status !== 'PENDING') throw forbidden(status, 'ACTIVE', 'approved');
      const reason = trigger.type === 'APPROVE' ? (trigger.reason ?? null) : null;
      return {
        changed: true,
        next: { status: 'ACTIVE', status_reason: reason, enrolled_at: ctx.now, unenrolled_at: null },
        reason: reason ?? (trigger.type === 'AUTO_APPROVE' ? 'Approved automatically (sandbox program)' : 'Approved by the utility'),
      };
    }
    case 'REJECT': {
      if (status === 'REJECTED') return unchanged(state);
      if (status !== 'PENDING') throw forbidden(status, 'REJECTED', 'rejected');
      return { changed: true, next: { ...state, status: 'REJECTED', status_reason: trigger.reason }, reason: trigger.reason };
    }
    case 'REQUEST_ACTION': {
      if (status === 'NEEDS_ACTION') return unchanged(state);
      if (status !== 'PENDING') throw forbidden(status, 'NEEDS_ACTION', 'sent back to the user');
      return { changed: true, next: { ...state, status: 'NEEDS_ACTION', status_reason: trigger.reason }, reason: trigger.reason };
    }
    case 'END': {
      if (status === 'UNENROLLED') return unchanged(state);
      if (status !== 'ACTIVE') throw forbidden(status, 'UNENROLLED', 'ended by the utility');
      const reason = trigger.reason ?? 'Ended by the utility';
      return { changed: true, next: { ...state, status: 'UNENROLLED', status_reason: reason, unenrolled_at: ctx.now }, reason };
    }
    case 'UNENROLL': {
      if (status === 'UNENROLLED' || status === 'REJECTED') return unchanged(state);
      if (status === 'PENDING' || status === 'NEEDS_ACTION') {
        const reason = 'Canceled by the user';
        return { changed: true, next: { ...state, status: 'UNENROLLED', status_reason: reason, unenrolled_at: ctx.now }, reason };
      }
      // ACTIVE: the program's minimum commitment decides.
      const allowedFrom = commitmentEndsAt(state.enrolled_at, ctx.minimumCommitmentMonths);
      if (allowedFrom !== null && ctx.now.getTime() < allowedFrom.getTime()) {
        throw Errors.MINIMUM_COMMITMENT_NOT_MET(`The program has a minimum commitment of ${ctx.minimumCommitmentMonths} months; unenrolling is allowed from ${allowedFrom.toISOString()}`,
          { errors: [{ message: `allowed from ${allowedFrom.toISOString()}`, path: 'enrolled_at' }] },
        );
      }
      const reason = 'Unenrolled by the user';
      return { changed: true, next: { ...state, status: 'UNENROLLED', status_reason: reason, unenrolled_at: ctx.now }, reason };
    }
    case 'LAST_DEVICE_DELETED': {
      // No minimum commitment holds a device that no longer exists.
      if (isTerminal(status)) return unchanged(state);
      const reason = 'Every device of the enrollment was deleted';
      return { changed: true, next: { ...state, status: 'UNENROLLED', status_reason: reason, unenrolled_at: ctx.now }, reason };
    }
    case 'INFO_PROVIDED': {
      // Only an enrollment waiting for the user moves; for any other the information is simply kept.
      if (status !== 'NEEDS_ACTION') return unchanged(state);
      const reason = trigger.what === 'site' ? 'Site information updated' : 'Supplement received';
      return { changed: true, next: { ...state, status: 'PENDING', status_reason: null }, reason };
    }
  }
}

/**
 * A deleted device leaves the enrollment that held it: the devices that remain, and the trigger
 * that ends the enrollment when none does (null while some remain). Undefined when the enrollment
 * does not hold the device (a redelivered deletion).
 */
export function withoutDevice(deviceIds: readonly string[], deletedId: string): { device_ids: string[]; trigger: Trigger | null } | undefined {
  if (!deviceIds.includes(deletedId)) return undefined;
  const remaining = deviceIds.filter((d) => d !== deletedId);
  return { device_ids: remaining, trigger: remaining.length === 0 ? { type: 'LAST_DEVICE_DELETED' } : null };
}

/**
 * The trigger a utility's `PATCH {status, status_reason}` stands for. Rejecting and asking for
 * more must say why (the end user sees the reason).
 */
export function utilityTrigger(status: 'ACTIVE' | 'REJECTED' | 'NEEDS_ACTION' | 'UNENROLLED', reason: string | null | undefined): Trigger {
  switch (status) {
    case 'ACTIVE':
      return { type: 'APPROVE', reason: reason ?? null };
    case 'UNENROLLED':
      return { type: 'END', reason: reason ?? null };
    case 'REJECTED':
    case 'NEEDS_ACTION': {
      if (!reason) {
        throw Errors.VALIDATION_ERROR(`status_reason is required with status ${status}`, {
          detail: [{ loc: ['body', 'status_reason'], msg: `Required with status ${status}`, type: 'missing' }],
          errors: [{ message: `Required with status ${status}`, path: 'status_reason' }],
        });
      }
      return status === 'REJECTED' ? { type: 'REJECT', reason } : { type: 'REQUEST_ACTION', reason };
    }
  }
}

/** When a sandbox program approves an enrollment that has just become PENDING. */
export function autoApproveAt(autoApproveAfterMs: number | null, now: Date): Date | null {
  return autoApproveAfterMs === null ? null : new Date(now.getTime() + autoApproveAfterMs);
}
