import { avroRecord, deletedFlag, recordType, text, timestamp } from './fields.ts';
import { EnrollmentFields } from './entities/enrollment.ts';
import { compositeKey, defineTopic } from './topic.ts';

/**
 * The latest state of an enrollment, keyed by enrollment id on a compacted topic: the API's
 * Enrollment plus the tenancy (integrator, utility) and the program groups it belongs to, so
 * that dispatch, webhooks and the portal can keep read models of it.
 */
export const EnrollmentSchema = avroRecord(recordType('Enrollment', 'efs.enrollment', EnrollmentFields));

export const EnrollmentsTopic = defineTopic({ name: 'efs.enrollment.enrollments', kind: 'state', partitions: 6, compacted: true, schema: EnrollmentSchema, fields: EnrollmentFields });

/**
 * The latest state of a program's enrollment group, keyed `<program_id>/<group_id>` on a compacted
 * topic; `deleted` marks a removal. Dispatch tells a GROUP target that exists but has no ACTIVE
 * enrollment (409) from one that does not exist (404) with it.
 */
const ProgramGroupFields = {
  program_id: text(),
  id: text(),
  utility_id: text(),
  name: text(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted: deletedFlag,
};
export const ProgramGroupSchema = avroRecord(recordType('ProgramGroup', 'efs.enrollment', ProgramGroupFields));

export const ProgramGroupsTopic = defineTopic({ name: 'efs.enrollment.groups', kind: 'state', partitions: 3, compacted: true, schema: ProgramGroupSchema });
export const programGroupKey = (programId: string, groupId: string) => compositeKey(programId, groupId);
