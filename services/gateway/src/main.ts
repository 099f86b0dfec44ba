import { commonEnv, parseConfig } from '@efs/config';
import { createDatabaseAndMigrate, createTransport, instanceId, onShutdown } from '@efs/runtime';
import { createLogger } from '@efs/logging';
import { initTracing, shutdownTracing } from '@efs/telemetry';
import { z } from 'zod';
import { gateway } from './module.ts';

// The gateway is its own process kind: it needs a reply topic of its own and serves HTTP itself.
const common = parseConfig(z.object(commonEnv), process.env);
const config = gateway.config(process.env);
initTracing({ serviceName: 'efs-gateway' });
const logger = createLogger({ name: 'gateway', level: common.LOG_LEVEL });
const db = await createDatabaseAndMigrate(common, [gateway], logger, process.env.MIGRATE !== 'false');
const transport = createTransport(common, logger, { replyInstanceId: config.GATEWAY_INSTANCE_ID ?? instanceId() });
await transport.start();
const service = await gateway.create({ logger, transport, db, config });
await service.start();
logger.info(service.urls(), 'gateway started');
onShutdown(logger, async () => {
  await service.stop();
  await transport.stop();
  await db.close();
  await shutdownTracing();
});
