import { operationRouter, type Operation } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { DispatchConfig } from './config.ts';

export const DISPATCH_SCHEMA = 'dispatch';

/** Composition root of event-dispatch: demand-response events, commands and their delivery. */
export async function createDispatchService(deps: ServiceDeps<DispatchConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'event-dispatch' });
  const operations: Record<string, Operation<any, any, any>> = {};
  return {
    name: 'event-dispatch',
    async start() {
      await deps.transport.serve('dispatch', operationRouter(operations, logger));
    },
    async stop() {},
  };
}
