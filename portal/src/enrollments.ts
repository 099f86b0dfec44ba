import type { EnrollmentType } from '@efs/api';

/** PENDING, NEEDS_ACTION and ACTIVE enrollments hold their devices; the others are history. */
export const isCurrent = (e: Pick<EnrollmentType, 'status'>) => e.status === 'PENDING' || e.status === 'NEEDS_ACTION' || e.status === 'ACTIVE';
