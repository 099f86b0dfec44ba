import { z } from 'zod';
import { EnrollMethods, EnrollmentFields, EnrollmentStatuses, IntegratorEnrollmentFields, ProgramSpecificAttributeType as ProgramSpecificAttributeFields } from '@efs/contracts';
import { DateTime, Pagination, repeatable } from './common.ts';
import { createShape, namedEnum, namedRecord, recordShape, zodOf } from './fields.ts';

export const EnrollmentStatus = namedEnum(EnrollmentStatuses);
export type EnrollmentStatusType = z.infer<typeof EnrollmentStatus>;

export const EnrollMethod = namedEnum(EnrollMethods);
export type EnrollMethodType = z.infer<typeof EnrollMethod>;

/** One answer to an item of the program's `enrollment_form`. */
export const ProgramSpecificAttribute = namedRecord(ProgramSpecificAttributeFields);
export type ProgramSpecificAttributeType = z.infer<typeof ProgramSpecificAttribute>;

/** An enrollment as every endpoint answers it: the specification's 12 fields, always present. */
export const Enrollment = z.object(recordShape(IntegratorEnrollmentFields)).meta({ id: 'Enrollment' });
export type EnrollmentType = z.infer<typeof Enrollment>;

/** `POST /v1/site/{siteId}/enrollments` body (decisions.md, Enrollments). */
export const EnrollmentCreate = z
  .object({
    // Any text: an id that names no program answers 404, not 400.
    program_id: z.string().min(1).max(100),
    ...createShape(EnrollmentFields),
  })
  .meta({ id: 'EnrollmentCreate' });
export type EnrollmentCreateType = z.infer<typeof EnrollmentCreate>;

export const SiteEnrollmentsParams = z.object({ siteId: z.string().min(1).max(200) });
export const SiteEnrollmentParams = z.object({ siteId: z.string().min(1).max(200), enrollmentId: z.string().min(1).max(100) });

/** One status or several (repeatable `status`), always read as a list. */
const StatusFilter = repeatable(EnrollmentStatus, EnrollmentStatus.options.length);

/**
 * `GET /v1/site/{siteId}/enrollments`: the current enrollments (PENDING, NEEDS_ACTION, ACTIVE)
 * unless `status` (repeatable) names others, so that a non-empty list means enrolled.
 */
export const SiteEnrollmentListQuery = Pagination.extend({
  program_id: z.string().min(1).max(100).optional(),
  status: StatusFilter.optional().describe('Repeatable; default PENDING, NEEDS_ACTION and ACTIVE (e.g. UNENROLLED and REJECTED for history).'),
});
export type SiteEnrollmentListQueryType = z.infer<typeof SiteEnrollmentListQuery>;

/** An enrollment as the utility API shows it: the Enrollment plus the program groups and timestamps. */
export const UtilityEnrollment = z.object(recordShape(EnrollmentFields)).meta({ id: 'UtilityEnrollment' });
export type UtilityEnrollmentType = z.infer<typeof UtilityEnrollment>;

/** `GET {utility_base_url}/v1/enrollments`. */
export const UtilityEnrollmentListQuery = Pagination.extend({
  program_id: z.string().min(1).max(100).optional(),
  status: StatusFilter.optional().describe('Repeatable; default every status.'),
});
export type UtilityEnrollmentListQueryType = z.infer<typeof UtilityEnrollmentListQuery>;

export const EnrollmentIdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * `PATCH {utility_base_url}/v1/enrollments/{id}`: approve, reject, ask for more, or end; and set
 * its groups. Either may come alone (a utility building GROUP targets sends `group_ids` only).
 */
export const EnrollmentPatch = z
  .object({
    status: z.enum(['ACTIVE', 'REJECTED', 'NEEDS_ACTION', 'UNENROLLED']).optional(),
    status_reason: zodOf(EnrollmentFields.status_reason).optional(),
    group_ids: zodOf(EnrollmentFields.group_ids).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.status === undefined && p.group_ids === undefined) ctx.addIssue({ code: 'custom', path: [], message: 'Give status, group_ids or both' });
    if (p.status === undefined && p.status_reason != null) ctx.addIssue({ code: 'custom', path: ['status_reason'], message: 'status_reason goes with a status' });
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
