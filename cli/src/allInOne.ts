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
  // Every variable is checked before anything is opened: a bad value stops the start untouched.
  const configs = backendModules.map((m) => m.config(env));
  const gatewayConfig = gatewayModule.config(env);
  const db = await createDatabaseAndMigrate(common, modules, logger, env.MIGRATE !== 'false');
  const transport = createTransport(common, logger, { replyInstanceId: env.GATEWAY_INSTANCE_ID || instanceId() });
  const services: Service[] = [];
  let gw: Awaited<ReturnType<typeof gatewayModule.create>>;
  try {
    await transport.start();
    for (const [i, m] of backendModules.entries()) {
      const s = await m.create({ logger, transport, db, config: configs[i] });
      await s.start();
      services.push(s);
    }
    gw = await gatewayModule.create({ logger, transport, db, config: gatewayConfig });
    services.push(gw);
    await gw.start();
  } catch (err) {
    // A failed start (a port in use, say) stops what it started and releases the database.
    for (const s of [...services].reverse()) await s.stop().catch(() => undefined);
    await transport.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
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
