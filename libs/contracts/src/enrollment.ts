import { defineTopic } from './topic.ts';

const nullableString = <const N extends string>(name: N) => ({ name, type: ['null', 'string'], default: null }) as const;

export const EnrollmentStatusSchema = {
  type: 'enum',
  name: 'EnrollmentStatus',
  namespace: 'efs.enrollment',
  symbols: ['ACTIVE', 'NEEDS_ACTION', 'PENDING', 'REJECTED', 'UNENROLLED'],
} as const;

export const EnrollMethodSchema = {
  type: 'enum',
  name: 'EnrollMethod',
  namespace: 'efs.enrollment',
  symbols: ['AUTO_ENROLL', 'USER_ACTION'],
} as const;

const ProgramSpecificAttribute = {
  type: 'record',
  name: 'ProgramSpecificAttribute',
  namespace: 'efs.enrollment',
  fields: [
    { name: 'name', type: 'string' },
    { name: 'value', type: 'string' },
  ],
} as const;

/**
 * The latest state of an enrollment, keyed by enrollment id on a compacted topic: the API's
 * Enrollment plus the tenancy (integrator, utility) and the program groups it belongs to, so
 * that dispatch, webhooks and the portal can keep read models of it.
 */
export const EnrollmentSchema = {
  type: 'record',
  name: 'Enrollment',
  namespace: 'efs.enrollment',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'integrator_id', type: 'string' },
    { name: 'utility_id', type: 'string' },
    { name: 'site_id', type: 'string' },
    { name: 'program_id', type: 'string' },
    { name: 'device_ids', type: { type: 'array', items: 'string' } },
    { name: 'enroll_method', type: EnrollMethodSchema },
    { name: 'status', type: EnrollmentStatusSchema },
    nullableString('status_reason'),
    nullableString('enrolled_at'),
    nullableString('unenrolled_at'),
    { name: 'program_specific_attributes', type: { type: 'array', items: ProgramSpecificAttribute } },
    { name: 'has_agreed_to_terms_and_conditions', type: ['null', 'boolean'], default: null },
    nullableString('terms_and_conditions_version'),
    { name: 'group_ids', type: { type: 'array', items: 'string' } },
    { name: 'created_at', type: 'string' },
    { name: 'updated_at', type: 'string' },
  ],
} as const;

export const EnrollmentsTopic = defineTopic({ name: 'efs.enrollment.enrollments', kind: 'state', partitions: 6, compacted: true, schema: EnrollmentSchema });
