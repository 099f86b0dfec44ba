import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger, type Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import { createDatabaseAndMigrate, createTransport, instanceId, type Service } from '@efs/runtime';
import type { Database } from '@efs/db';
import { initTracing, shutdownTracing } from '@efs/telemetry';
import { backendModules, gatewayModule } from './modules.ts';

export interface System {
  urls: Record<'public' | 'utility' | 'portal', string>;
  transport: Transport;
  db: Database;
  logger: Logger;
  stop(): Promise<void>;
}

/**
 * Every service in one process: the in-process transport and embedded PGlite by default, or
 * real Kafka and Postgres when KAFKA_BROKERS / DATABASE_URL are set. Each service still owns its
 * schema and talks to the others only through messages.
 */
export async function startSystem(env: Record<string, string | undefined> = process.env): Promise<System> {
  const common = parseConfig(z.object(commonEnv), env);
  initTracing({ serviceName: 'efs' });
  const logger = createLogger({ name: 'efs', level: common.LOG_LEVEL });
  const modules = [...backendModules, gatewayModule];
  const db = await createDatabaseAndMigrate(common, modules, logger, env.MIGRATE !== 'false');
  const transport = createTransport(common, logger, { replyInstanceId: env.GATEWAY_INSTANCE_ID || instanceId() });
  await transport.start();
  const services: Service[] = [];
  for (const m of backendModules) {
    const s = await m.create({ logger, transport, db, config: m.config(env) });
    await s.start();
    services.push(s);
  }
  const gw = await gatewayModule.create({ logger, transport, db, config: gatewayModule.config(env) });
  await gw.start();
  services.push(gw);
  return {
    urls: gw.urls(),
    transport,
    db,
    logger,
    async stop() {
      // Stop the edge first so nothing new arrives, then the services, then the connections.
      for (const s of [...services].reverse()) await s.stop();
      await transport.stop();
      await db.close();
      await shutdownTracing();
    },
  };
}
