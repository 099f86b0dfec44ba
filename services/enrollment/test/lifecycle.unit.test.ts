import { describe, expect, it } from 'vitest';
import type { EnrollmentStatusType } from '@efs/api';
import { addMonths, commitmentEndsAt, Statuses, transition, utilityTrigger, withoutDevice, type LifecycleState, type Trigger } from '../src/domain/lifecycle.ts';
import { errorOf } from './fixtures.ts';

const now = new Date('2026-06-15T12:00:00.000Z');
const enrolledAt = new Date('2026-01-31T08:00:00.000Z');
const ctx = { now, minimumCommitmentMonths: null };

function state(status: EnrollmentStatusType, over: Partial<LifecycleState> = {}): LifecycleState {
  const active = status === 'ACTIVE' || status === 'UNENROLLED';
  return { status, status_reason: null, enrolled_at: active ? enrolledAt : null, unenrolled_at: status === 'UNENROLLED' ? new Date('2026-03-01T00:00:00Z') : null, ...over };
}

const triggers: Record<string, Trigger> = {
  APPROVE: { type: 'APPROVE' },
  AUTO_APPROVE: { type: 'AUTO_APPROVE' },
  REJECT: { type: 'REJECT', reason: 'Not a customer of this utility' },
  REQUEST_ACTION: { type: 'REQUEST_ACTION', reason: 'Upload a utility bill' },
  END: { type: 'END' },
  UNENROLL: { type: 'UNENROLL' },
  INFO_PROVIDED: { type: 'INFO_PROVIDED', what: 'site' },
  LAST_DEVICE_DELETED: { type: 'LAST_DEVICE_DELETED' },
};

/**
 * The whole table: for every trigger and every status, what happens. `changed` names the next
 * status, `same` means accepted without change, `conflict` a 409 CONFLICT.
 */
const table: Record<string, Record<EnrollmentStatusType, string>> = {
  APPROVE: { PENDING: 'ACTIVE', ACTIVE: 'same', NEEDS_ACTION: 'conflict', REJECTED: 'conflict', UNENROLLED: 'conflict' },
  AUTO_APPROVE: { PENDING: 'ACTIVE', ACTIVE: 'same', NEEDS_ACTION: 'conflict', REJECTED: 'conflict', UNENROLLED: 'conflict' },
  REJECT: { PENDING: 'REJECTED', ACTIVE: 'conflict', NEEDS_ACTION: 'conflict', REJECTED: 'same', UNENROLLED: 'conflict' },
  REQUEST_ACTION: { PENDING: 'NEEDS_ACTION', ACTIVE: 'conflict', NEEDS_ACTION: 'same', REJECTED: 'conflict', UNENROLLED: 'conflict' },
  END: { PENDING: 'conflict', ACTIVE: 'UNENROLLED', NEEDS_ACTION: 'conflict', REJECTED: 'conflict', UNENROLLED: 'same' },
  UNENROLL: { PENDING: 'UNENROLLED', ACTIVE: 'UNENROLLED', NEEDS_ACTION: 'UNENROLLED', REJECTED: 'same', UNENROLLED: 'same' },
  INFO_PROVIDED: { PENDING: 'same', ACTIVE: 'same', NEEDS_ACTION: 'PENDING', REJECTED: 'same', UNENROLLED: 'same' },
  LAST_DEVICE_DELETED: { PENDING: 'UNENROLLED', ACTIVE: 'UNENROLLED', NEEDS_ACTION: 'UNENROLLED', REJECTED: 'same', UNENROLLED: 'same' },
};

describe('enrollment state machine: every trigger from every status', () => {
  for (const [name, row] of Object.entries(table)) {
    for (const from of Statuses) {
      const expected = row[from];
      it(`${name} from ${from} → ${expected}`, () => {
        const s = state(from);
        if (expected === 'conflict') {
          const err = errorOf(() => transition(s, triggers[name]!, ctx));
          expect(err.code).toBe('CONFLICT');
          expect(err.status).toBe(409);
          expect(err.message).toContain(from);
        } else if (expected === 'same') {
          const r = transition(s, triggers[name]!, ctx);
          expect(r.changed).toBe(false);
          expect(r.next).toEqual(s);
        } else {
          const r = transition(s, triggers[name]!, ctx);
          expect(r.changed).toBe(true);
          expect(r.next.status).toBe(expected);
          if (r.changed) expect(r.reason.length).toBeGreaterThan(0);
        }
      });
    }
  }
});

describe('what each transition records', () => {
  it('a refused move names the status asked for and the one held, never an internal trigger', () => {
    const err = errorOf(() => transition(state('ACTIVE'), triggers.REQUEST_ACTION!, ctx));
    expect(err.toBody().errors).toEqual([{ message: 'status NEEDS_ACTION is not allowed for an enrollment that is ACTIVE', path: 'status' }]);
    expect(JSON.stringify(err.toBody())).not.toContain('REQUEST_ACTION');
  });

  it('the last device deleted ends the enrollment inside its minimum commitment too, with a reason', () => {
    const r = transition(state('ACTIVE', { enrolled_at: now }), { type: 'LAST_DEVICE_DELETED' }, { now, minimumCommitmentMonths: 12 });
    expect(r.next).toEqual({ status: 'UNENROLLED', status_reason: 'Every device of the enrollment was deleted', enrolled_at: now, unenrolled_at: now });
  });

  it('a deleted device leaves the enrollment; the last one ends it', () => {
    expect(withoutDevice(['b1', 'b2'], 'b1')).toEqual({ device_ids: ['b2'], trigger: null });
    expect(withoutDevice(['b2'], 'b2')).toEqual({ device_ids: [], trigger: { type: 'LAST_DEVICE_DELETED' } });
    expect(withoutDevice(['b2'], 'b1')).toBeUndefined();
  });

  it('approval sets enrolled_at to now and keeps the utility reason', () => {
    const r = transition(state('PENDING'), { type: 'APPROVE', reason: 'Welcome' }, ctx);
    expect(r.next).toEqual({ status: 'ACTIVE', status_reason: 'Welcome', enrolled_at: now, unenrolled_at: null });
    const auto = transition(state('PENDING'), { type: 'AUTO_APPROVE' }, ctx);
    expect(auto.next).toEqual({ status: 'ACTIVE', status_reason: null, enrolled_at: now, unenrolled_at: null });
    expect(auto.changed && auto.reason).toMatch(/sandbox/);
  });

  it('reject and ask-for-more keep the reason for the user; neither sets dates', () => {
    const rej = transition(state('PENDING'), triggers.REJECT!, ctx);
    expect(rej.next).toEqual({ status: 'REJECTED', status_reason: 'Not a customer of this utility', enrolled_at: null, unenrolled_at: null });
    const na = transition(state('PENDING'), triggers.REQUEST_ACTION!, ctx);
    expect(na.next).toEqual({ status: 'NEEDS_ACTION', status_reason: 'Upload a utility bill', enrolled_at: null, unenrolled_at: null });
  });

  it('info provided moves NEEDS_ACTION back to PENDING and clears the reason', () => {
    const r = transition(state('NEEDS_ACTION', { status_reason: 'Upload a bill' }), { type: 'INFO_PROVIDED', what: 'supplement' }, ctx);
    expect(r.next).toEqual({ status: 'PENDING', status_reason: null, enrolled_at: null, unenrolled_at: null });
    expect(r.changed && r.reason).toBe('Supplement received');
  });

  it('cancelling a PENDING or NEEDS_ACTION enrollment sets unenrolled_at', () => {
    for (const from of ['PENDING', 'NEEDS_ACTION'] as const) {
      const r = transition(state(from), { type: 'UNENROLL' }, ctx);
      expect(r.next).toMatchObject({ status: 'UNENROLLED', unenrolled_at: now, enrolled_at: null, status_reason: 'Canceled by the user' });
    }
  });

  it('the utility ending an ACTIVE enrollment sets unenrolled_at and keeps enrolled_at, whatever the commitment', () => {
    const r = transition(state('ACTIVE'), { type: 'END', reason: 'Program closed' }, { now, minimumCommitmentMonths: 12 });
    expect(r.next).toEqual({ status: 'UNENROLLED', status_reason: 'Program closed', enrolled_at: enrolledAt, unenrolled_at: now });
  });
});

describe('user unenrolling an ACTIVE enrollment and the minimum commitment', () => {
  const active = state('ACTIVE', { enrolled_at: new Date('2026-01-31T08:00:00.000Z') });

  it('inside the commitment: 409 MINIMUM_COMMITMENT_NOT_MET naming the first allowed date', () => {
    const err = errorOf(() => transition(active, { type: 'UNENROLL' }, { now, minimumCommitmentMonths: 12 }));
    expect(err.code).toBe('MINIMUM_COMMITMENT_NOT_MET');
    expect(err.status).toBe(409);
    expect(err.message).toContain('2027-01-31T08:00:00.000Z');
  });

  it('one millisecond before the end is still inside; at the end it is allowed', () => {
    const end = new Date('2027-01-31T08:00:00.000Z');
    expect(errorOf(() => transition(active, { type: 'UNENROLL' }, { now: new Date(end.getTime() - 1), minimumCommitmentMonths: 12 })).code).toBe('MINIMUM_COMMITMENT_NOT_MET');
    const r = transition(active, { type: 'UNENROLL' }, { now: end, minimumCommitmentMonths: 12 });
    expect(r.next).toMatchObject({ status: 'UNENROLLED', unenrolled_at: end, enrolled_at: active.enrolled_at });
  });

  it('no commitment (null or 0) allows it at once', () => {
    for (const m of [null, 0]) expect(transition(active, { type: 'UNENROLL' }, { now: new Date('2026-02-01T00:00:00Z'), minimumCommitmentMonths: m }).next.status).toBe('UNENROLLED');
  });
});

describe('calendar arithmetic', () => {
  it('adds months in UTC, clamping to the end of shorter months, across years', () => {
    expect(addMonths(new Date('2026-01-31T10:00:00Z'), 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonths(new Date('2028-01-31T10:00:00Z'), 1).toISOString()).toBe('2028-02-29T10:00:00.000Z');
    expect(addMonths(new Date('2026-11-15T00:00:00Z'), 3).toISOString()).toBe('2027-02-15T00:00:00.000Z');
    expect(addMonths(new Date('2026-03-31T23:59:59.999Z'), 12).toISOString()).toBe('2027-03-31T23:59:59.999Z');
  });

  it('commitment end needs both an enrolled_at and a positive commitment', () => {
    expect(commitmentEndsAt(null, 12)).toBeNull();
    expect(commitmentEndsAt(enrolledAt, null)).toBeNull();
    expect(commitmentEndsAt(enrolledAt, 6)?.toISOString()).toBe('2026-07-31T08:00:00.000Z');
  });
});

describe('utility PATCH to trigger', () => {
  it('maps each status and requires a reason for REJECTED and NEEDS_ACTION', () => {
    expect(utilityTrigger('ACTIVE', undefined)).toEqual({ type: 'APPROVE', reason: null });
    expect(utilityTrigger('UNENROLLED', 'bye')).toEqual({ type: 'END', reason: 'bye' });
    expect(utilityTrigger('REJECTED', 'no')).toEqual({ type: 'REJECT', reason: 'no' });
    expect(utilityTrigger('NEEDS_ACTION', 'more')).toEqual({ type: 'REQUEST_ACTION', reason: 'more' });
    for (const s of ['REJECTED', 'NEEDS_ACTION'] as const) {
      const err = errorOf(() => utilityTrigger(s, null));
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.errors).toEqual([{ message: `Required with status ${s}`, path: 'status_reason' }]);
    }
  });
});
