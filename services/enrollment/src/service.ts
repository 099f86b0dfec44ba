import { operationRouter, type Operation } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { EnrollmentConfig } from './config.ts';

export const ENROLLMENT_SCHEMA = 'enrollment';

/** Composition root of enrollment: enrollments of devices in programs and their lifecycle. */
export async function createEnrollmentService(deps: ServiceDeps<EnrollmentConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'enrollment' });
  const operations: Record<string, Operation<any, any, any>> = {};
  return {
    name: 'enrollment',
    async start() {
      await deps.transport.serve('enrollment', operationRouter(operations, logger));
    },
    async stop() {},
  };
}
