import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseEnrollmentConfig, type EnrollmentConfig } from './config.ts';
import { ENROLLMENT_SCHEMA, createEnrollmentService } from './service.ts';

export const enrollmentModule: ServiceModule<EnrollmentConfig> = {
  name: 'enrollment',
  schema: ENROLLMENT_SCHEMA,
  migrations,
  config: parseEnrollmentConfig,
  create: createEnrollmentService,
};
