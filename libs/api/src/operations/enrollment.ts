import { z } from 'zod';
import { DeviceMessageFields, SiteMessageFields, defineOperations } from '@efs/contracts';
import {
  Enrollment,
  EnrollmentCreate,
  EnrollmentIdParams,
  EnrollmentPatch,
  ProgramGroup,
  ProgramGroupCreate,
  ProgramGroupListQuery,
  ProgramGroupParams,
  ProgramGroupPatch,
  ProgramGroupsParams,
  SiteEnrollmentListQuery,
  SiteEnrollmentParams,
  SiteEnrollmentsParams,
  UtilityEnrollment,
  UtilityEnrollmentListQuery,
} from '../enrollments.ts';
import { wireShape } from '../fields.ts';

/** Body of the internal `autoEnroll` request commissioning sends. */
export const AutoEnrollRequest = z.object({
  /** The site as commissioning announces it (its state topic's message). */
  site: z.object(wireShape(SiteMessageFields)),
  /** The devices to enroll, as commissioning announces them. */
  devices: z.array(z.object(wireShape(DeviceMessageFields))),
  program_id: z.string().min(1),
});
export type AutoEnrollRequestType = z.input<typeof AutoEnrollRequest>;

/** What enrollment answers on efs.enrollment.requests; each handler is `handlers/<name>.ts`. */
export const EnrollmentOperations = defineOperations('enrollment', {
  createEnrollment: {
    params: SiteEnrollmentsParams,
    body: EnrollmentCreate,
    response: Enrollment,
    errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'SITE_INFO_INCOMPLETE', 'NOT_ELIGIBLE', 'TERMS_NOT_ACCEPTED', 'SERVICE_UNAVAILABLE'],
  },
  listSiteEnrollments: { params: SiteEnrollmentsParams, query: SiteEnrollmentListQuery, response: z.array(Enrollment), errors: ['FORBIDDEN'] },
  deleteEnrollment: { params: SiteEnrollmentParams, response: Enrollment, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'MINIMUM_COMMITMENT_NOT_MET'] },
  /** Internal (commissioning, when the homeowner agreed beforehand): a PENDING AUTO_ENROLL enrollment. */
  autoEnroll: { body: AutoEnrollRequest, response: Enrollment, errors: ['FORBIDDEN', 'NOT_FOUND', 'NOT_ELIGIBLE', 'CONFLICT'] },
  listEnrollments: { query: UtilityEnrollmentListQuery, response: z.array(UtilityEnrollment), errors: ['FORBIDDEN', 'NOT_FOUND'] },
  getEnrollment: { params: EnrollmentIdParams, response: UtilityEnrollment, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  updateEnrollment: { params: EnrollmentIdParams, body: EnrollmentPatch, response: UtilityEnrollment, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'] },
  listGroups: { params: ProgramGroupsParams, query: ProgramGroupListQuery, response: z.array(ProgramGroup), errors: ['FORBIDDEN', 'NOT_FOUND'] },
  createGroup: { params: ProgramGroupsParams, body: ProgramGroupCreate, response: ProgramGroup, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'] },
  updateGroup: { params: ProgramGroupParams, body: ProgramGroupPatch, response: ProgramGroup, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  deleteGroup: { params: ProgramGroupParams, response: ProgramGroup, errors: ['FORBIDDEN', 'NOT_FOUND'] },
});
