import type { EnrollMethodType, EnrollmentType, ProgramSpecificAttributeType, UtilityEnrollmentType } from '@efs/api';
import { autoApproveAt } from './lifecycle.ts';
import type { ProgramView } from './readModels.ts';
import { EnrollmentFields, IntegratorEnrollmentFields, timestamp, toWire, visibleFields, type DomainOf, type EnrollmentMessage } from '@efs/contracts';

/** An enrollment as the service keeps it: what it announces, and two times its rules need. */
export const StoredEnrollmentFields = {
  ...EnrollmentFields,
  /** When a sandbox program approves it on its own (PENDING only). */
  auto_approve_at: timestamp({ nullable: true, hidden: true }),
  /** When `status` last changed: a site update or supplement after it answers a NEEDS_ACTION. */
  status_changed_at: timestamp({ hidden: true }),
} as const;

export type Enrollment = DomainOf<typeof StoredEnrollmentFields>;

/** What an enrollment records of the program's terms. */
export interface TermsAgreement {
  has_agreed_to_terms_and_conditions: boolean | null;
  terms_and_conditions_version: string | null;
}

/** A new PENDING enrollment of a site's devices in a program; a sandbox program approves it after its delay. */
export function newEnrollment(e: {
  id: string;
  integratorId: string;
  siteId: string;
  program: Pick<ProgramView, 'id' | 'utility_id' | 'auto_approve_after_ms'>;
  deviceIds: string[];
  method: EnrollMethodType;
  attributes: ProgramSpecificAttributeType[];
  terms: TermsAgreement;
  now: Date;
}): Enrollment {
  return {
    id: e.id,
    integrator_id: e.integratorId,
    utility_id: e.program.utility_id,
    site_id: e.siteId,
    program_id: e.program.id,
    device_ids: e.deviceIds,
    enroll_method: e.method,
    status: 'PENDING',
    status_reason: null,
    enrolled_at: null,
    unenrolled_at: null,
    program_specific_attributes: e.attributes,
    ...e.terms,
    group_ids: [],
    auto_approve_at: autoApproveAt(e.program.auto_approve_after_ms, e.now),
    status_changed_at: e.now,
    created_at: e.now,
    updated_at: e.now,
  };
}

/** The specification's Enrollment: exactly its 12 fields. */
export function toApiEnrollment(e: Enrollment): EnrollmentType {
  return toWire(IntegratorEnrollmentFields, e);
}

/** The utility's view: the Enrollment plus its groups and timestamps. */
export function toUtilityEnrollment(e: Enrollment): UtilityEnrollmentType {
  return toWire(visibleFields(EnrollmentFields), e);
}

/** The enrollment as announced on the enrollments state topic. */
export function toEnrollmentMessage(e: Enrollment): EnrollmentMessage {
  return toWire(EnrollmentFields, e);
}
