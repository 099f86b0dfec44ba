import { operationRouter, type Operation } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { CommissioningConfig } from './config.ts';

export const COMMISSIONING_SCHEMA = 'commissioning';

/** Composition root of commissioning: sites and devices of integrators. */
export async function createCommissioningService(deps: ServiceDeps<CommissioningConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'commissioning' });
  const operations: Record<string, Operation<any, any, any>> = {};
  return {
    name: 'commissioning',
    async start() {
      await deps.transport.serve('commissioning', operationRouter(operations, logger));
    },
    async stop() {},
  };
}
