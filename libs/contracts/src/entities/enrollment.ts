import { array, boolean, enumOf, enumType, omit, record, recordType, text, timestamp, visibleFields } from '../fields.ts';

export const EnrollmentStatuses = enumType('EnrollmentStatus', 'efs.enrollment', ['ACTIVE', 'NEEDS_ACTION', 'PENDING', 'REJECTED', 'UNENROLLED']);
export const EnrollMethods = enumType('EnrollMethod', 'efs.enrollment', ['AUTO_ENROLL', 'USER_ACTION']);

/** One answer to an item of the program's `enrollment_form`. */
export const ProgramSpecificAttributeType = recordType('ProgramSpecificAttribute', 'efs.enrollment', {
  name: text({ min: 1, max: 200 }),
  value: text({ max: 10_000 }),
});

/**
 * An Enrollment: the specification's 12 fields, its tenancy (integrator and utility, never
 * shown), the program groups it belongs to and timestamps (shown to its utility).
 */
export const EnrollmentFields = {
  id: text({ format: 'uuid' }),
  integrator_id: text({ hidden: true }),
  utility_id: text({ hidden: true }),
  site_id: text(),
  program_id: text({ format: 'uuid' }),
  device_ids: array(text({ min: 1, max: 200 }), { min: 1, max: 100, create: 'required' }),
  enroll_method: enumOf(EnrollMethods),
  status: enumOf(EnrollmentStatuses),
  status_reason: text({ min: 1, max: 2000, nullable: true }),
  enrolled_at: timestamp({ nullable: true }),
  unenrolled_at: timestamp({ nullable: true }),
  program_specific_attributes: array(record(ProgramSpecificAttributeType), { max: 100, create: 'optional' }),
  has_agreed_to_terms_and_conditions: boolean({ nullable: true, create: 'optional' }),
  terms_and_conditions_version: text({ max: 200, nullable: true, create: 'optional' }),
  group_ids: array(text({ min: 1, max: 100 }), { max: 100 }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

/** The specification's Enrollment (12 fields), as integrators and their apps see it: no groups or timestamps. */
export const IntegratorEnrollmentFields = omit(visibleFields(EnrollmentFields), ['group_ids', 'created_at', 'updated_at']);
