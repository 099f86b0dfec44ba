import type { Database } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import { startProcess } from '@efs/runtime';
import { allModules, gatewayModule } from './modules.ts';

export interface System {
  urls: Record<'public' | 'utility' | 'portal', string>;
  /** The health listener: /healthz, /readyz and the Prometheus /metrics (HEALTH_PORT). */
  healthUrl: string;
  transport: Transport;
  db: Database;
  logger: Logger;
  stop(): Promise<void>;
}

/**
 * Every service in one process: the in-process transport and embedded PGlite by default, or
 * real Kafka and Postgres when KAFKA_BROKERS / DATABASE_URL are set. Each service still owns its
 * schema and talks to the others only through messages; the gateway starts last, once they serve.
 */
export async function startSystem(env: Record<string, string | undefined> = process.env): Promise<System> {
  const running = await startProcess('efs', allModules, env);
  return {
    urls: running.serviceOf(gatewayModule).urls(),
    healthUrl: running.healthUrl,
    transport: running.transport,
    db: running.db,
    logger: running.logger,
    stop: () => running.stop(),
  };
}
