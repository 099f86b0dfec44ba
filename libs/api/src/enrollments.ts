import { z } from 'zod';
import { DateTime, Pagination } from './common.ts';

export const EnrollmentStatus = z.enum(['ACTIVE', 'NEEDS_ACTION', 'PENDING', 'REJECTED', 'UNENROLLED']).meta({ id: 'EnrollmentStatus' });
export type EnrollmentStatusType = z.infer<typeof EnrollmentStatus>;

export const EnrollMethod = z.enum(['AUTO_ENROLL', 'USER_ACTION']).meta({ id: 'EnrollMethod' });
export type EnrollMethodType = z.infer<typeof EnrollMethod>;

/** One answer to an item of the program's `enrollment_form`. */
export const ProgramSpecificAttribute = z.object({ name: z.string().min(1).max(200), value: z.string().max(10_000) }).meta({ id: 'ProgramSpecificAttribute' });
export type ProgramSpecificAttributeType = z.infer<typeof ProgramSpecificAttribute>;

/** An enrollment as every endpoint answers it: the specification's 12 fields, always present. */
export const Enrollment = z
  .object({
    id: z.uuid(),
    device_ids: z.array(z.string()),
    site_id: z.string(),
    program_id: z.uuid(),
    enroll_method: EnrollMethod,
    status: EnrollmentStatus,
    status_reason: z.string().nullable(),
    enrolled_at: DateTime.nullable(),
    unenrolled_at: DateTime.nullable(),
    program_specific_attributes: z.array(ProgramSpecificAttribute),
    has_agreed_to_terms_and_conditions: z.boolean().nullable(),
    terms_and_conditions_version: z.string().nullable(),
  })
  .meta({ id: 'Enrollment' });
export type EnrollmentType = z.infer<typeof Enrollment>;

/** `POST /v1/site/{siteId}/enrollments` body (decisions.md, Enrollments). */
export const EnrollmentCreate = z
  .object({
    program_id: z.string().min(1).max(100),
    device_ids: z.array(z.string().min(1).max(200)).min(1).max(100),
    program_specific_attributes: z.array(ProgramSpecificAttribute).max(100).optional(),
    has_agreed_to_terms_and_conditions: z.boolean().nullable().optional(),
    terms_and_conditions_version: z.string().max(200).nullable().optional(),
  })
  .meta({ id: 'EnrollmentCreate' });
export type EnrollmentCreateType = z.infer<typeof EnrollmentCreate>;

export const SiteEnrollmentsParams = z.object({ siteId: z.string().min(1).max(200) });
export const SiteEnrollmentParams = z.object({ siteId: z.string().min(1).max(200), enrollmentId: z.string().min(1).max(100) });

/** `GET /v1/site/{siteId}/enrollments`. */
export const SiteEnrollmentListQuery = Pagination.extend({
  program_id: z.string().min(1).max(100).optional(),
  status: EnrollmentStatus.optional(),
});
export type SiteEnrollmentListQueryType = z.infer<typeof SiteEnrollmentListQuery>;

/** An enrollment as the utility API shows it: the Enrollment plus the program groups and timestamps. */
export const UtilityEnrollment = Enrollment.extend({
  group_ids: z.array(z.string()),
  created_at: DateTime,
  updated_at: DateTime,
}).meta({ id: 'UtilityEnrollment' });
export type UtilityEnrollmentType = z.infer<typeof UtilityEnrollment>;

/** `GET {utility_base_url}/v1/enrollments`. */
export const UtilityEnrollmentListQuery = Pagination.extend({
  program_id: z.string().min(1).max(100).optional(),
  status: EnrollmentStatus.optional(),
});
export type UtilityEnrollmentListQueryType = z.infer<typeof UtilityEnrollmentListQuery>;

export const EnrollmentIdParams = z.object({ id: z.string().min(1).max(100) });

/** `PATCH {utility_base_url}/v1/enrollments/{id}`: approve, reject, ask for more, or end; and set its groups. */
export const EnrollmentPatch = z
  .object({
    status: z.enum(['ACTIVE', 'REJECTED', 'NEEDS_ACTION', 'UNENROLLED']),
    status_reason: z.string().min(1).max(2000).nullable().optional(),
    group_ids: z.array(z.string().min(1).max(100)).max(100).optional(),
  })
  .meta({ id: 'EnrollmentPatch' });
export type EnrollmentPatchType = z.infer<typeof EnrollmentPatch>;

/** A group of a program's enrollments, which events can target (`target_type` GROUP). */
export const ProgramGroup = z
  .object({
    id: z.string(),
    program_id: z.uuid(),
    name: z.string(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'ProgramGroup' });
export type ProgramGroupType = z.infer<typeof ProgramGroup>;

const GroupId = z.string().min(1).max(100).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits, ".", "_", ":" and "-" only');

export const ProgramGroupCreate = z.object({ id: GroupId.optional(), name: z.string().min(1).max(200) }).meta({ id: 'ProgramGroupCreate' });
export type ProgramGroupCreateType = z.infer<typeof ProgramGroupCreate>;
export const ProgramGroupPatch = z.object({ name: z.string().min(1).max(200) }).meta({ id: 'ProgramGroupPatch' });
export type ProgramGroupPatchType = z.infer<typeof ProgramGroupPatch>;

export const ProgramGroupsParams = z.object({ programId: z.string().min(1).max(100) });
export const ProgramGroupParams = z.object({ programId: z.string().min(1).max(100), id: z.string().min(1).max(100) });
export const ProgramGroupListQuery = Pagination;
