import type { EnrollMethodType, EnrollmentStatusType, EnrollmentType, ProgramSpecificAttributeType, UtilityEnrollmentType } from '@efs/api';
import type { EnrollmentMessage } from '@efs/contracts';

/** An enrollment as the service keeps it. */
export interface Enrollment {
  id: string;
  integrator_id: string;
  utility_id: string;
  site_id: string;
  program_id: string;
  device_ids: string[];
  enroll_method: EnrollMethodType;
  status: EnrollmentStatusType;
  status_reason: string | null;
  enrolled_at: Date | null;
  unenrolled_at: Date | null;
  program_specific_attributes: ProgramSpecificAttributeType[];
  has_agreed_to_terms_and_conditions: boolean | null;
  terms_and_conditions_version: string | null;
  group_ids: string[];
  /** When a sandbox program approves it on its own (PENDING only). */
  auto_approve_at: Date | null;
  /** When `status` last changed: a site update or supplement after it answers a NEEDS_ACTION. */
  status_changed_at: Date;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** The specification's Enrollment: exactly its 12 fields. */
export function toApiEnrollment(e: Enrollment): EnrollmentType {
  return {
    id: e.id,
    device_ids: [...e.device_ids],
    site_id: e.site_id,
    program_id: e.program_id,
    enroll_method: e.enroll_method,
    status: e.status,
    status_reason: e.status_reason,
    enrolled_at: iso(e.enrolled_at),
    unenrolled_at: iso(e.unenrolled_at),
    program_specific_attributes: e.program_specific_attributes.map((a) => ({ name: a.name, value: a.value })),
    has_agreed_to_terms_and_conditions: e.has_agreed_to_terms_and_conditions,
    terms_and_conditions_version: e.terms_and_conditions_version,
  };
}

/** The utility's view: the Enrollment plus its groups and timestamps. */
export function toUtilityEnrollment(e: Enrollment): UtilityEnrollmentType {
  return { ...toApiEnrollment(e), group_ids: [...e.group_ids], created_at: e.created_at.toISOString(), updated_at: e.updated_at.toISOString() };
}

/** The enrollment as announced on the enrollments state topic. */
export function toEnrollmentMessage(e: Enrollment): EnrollmentMessage {
  return {
    ...toApiEnrollment(e),
    integrator_id: e.integrator_id,
    utility_id: e.utility_id,
    group_ids: [...e.group_ids],
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
}
