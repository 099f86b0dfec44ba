import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { allTopics } from '@efs/contracts';
import { commonEnv, parseConfig, port, type CommonConfig } from '@efs/config';
import { openDatabase, migrateSchema, type Database, type Migration } from '@efs/db';
import { createHttpServer, type ReadinessCheck } from '@efs/http';
import { createLogger, type Logger } from '@efs/logging';
import { InProcessTransport, KafkaTransport, type Transport } from '@efs/messaging';
import { initTracing, shutdownTracing } from '@efs/telemetry';

/** What a service needs from the process that hosts it. */
export interface ServiceDeps<C = unknown> {
  logger: Logger;
  transport: Transport;
  db: Database;
  config: C;
}

/** A running part of the system: start() wires handlers, stop() drains them. */
export interface Service {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  readiness?: ReadinessCheck[];
}

/** How a service folder describes itself to the process that runs it. */
export interface ServiceModule<C = unknown, S extends Service = Service> {
  /** Folder name under services/. */
  name: string;
  /** The Postgres schema the service owns, or null for one without tables. */
  schema: string | null;
  migrations: readonly Migration[];
  /** Parses this service's own environment variables. */
  config(env: Record<string, string | undefined>): C;
  create(deps: ServiceDeps<C>): Promise<S>;
}

export function instanceId(): string {
  return `${hostname().replace(/[^a-zA-Z0-9-]/g, '-').slice(0, 40)}-${randomBytes(3).toString('hex')}`;
}

export function createTransport(config: CommonConfig, logger: Logger, opts: { replyInstanceId?: string } = {}): Transport {
  if (!config.KAFKA_BROKERS) return new InProcessTransport({ logger });
  return new KafkaTransport({
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter(Boolean),
    clientId: config.KAFKA_CLIENT_ID,
    registryUrl: config.SCHEMA_REGISTRY_URL,
    logger,
    topics: allTopics,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    ...(opts.replyInstanceId ? { replyInstanceId: opts.replyInstanceId } : {}),
  });
}

/** Runs every migration of the given services, each in its own schema (also a Kubernetes job step). */
export async function migrateServices(db: Database, modules: readonly ServiceModule<any>[], logger: Logger): Promise<void> {
  for (const m of modules) {
    if (!m.schema) continue;
    const applied = await migrateSchema(db.knex, m.schema, m.migrations);
    logger.info({ schema: m.schema, applied }, applied.length ? 'migrations applied' : 'schema up to date');
  }
}

/** Opens the database named by the environment (PGlite under DATA_DIR without DATABASE_URL) and migrates the modules' schemas. */
export async function createDatabaseAndMigrate(common: CommonConfig, modules: readonly ServiceModule<any>[], logger: Logger, migrate = true): Promise<Database> {
  const db = await openDatabase({ url: common.DATABASE_URL, dataDir: `${common.DATA_DIR}/pgdata`, logger, service: modules.map((m) => m.name).join(',') });
  try {
    if (migrate) await migrateServices(db, modules, logger);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

const ProcessEnv = z.object({ ...commonEnv, HEALTH_PORT: port(0), HOST: z.string().default('127.0.0.1') });

/**
 * Runs one service as its own OS process (distributed mode, one container each): connects to
 * Postgres and Kafka, migrates its schema unless MIGRATE=false, serves /healthz and /readyz on
 * HEALTH_PORT, and stops cleanly on SIGTERM or SIGINT.
 */
export async function runServiceProcess(module: ServiceModule<any>, env: Record<string, string | undefined> = process.env): Promise<void> {
  const common = parseConfig(ProcessEnv, env);
  const own = module.config(env);
  initTracing({ serviceName: `efs-${module.name}` });
  const logger = createLogger({ name: module.name, level: common.LOG_LEVEL });
  const db = await createDatabaseAndMigrate(common, [module], logger, env.MIGRATE !== 'false');
  // Every process can call other services (commissioning asks enrollment, for one), so each has a reply topic.
  const transport = createTransport(common, logger, { replyInstanceId: `${module.name}-${instanceId()}` });
  await transport.start();
  const service = await module.create({ logger, transport, db, config: own });
  await service.start();
  const health = createHttpServer({
    logger,
    name: 'health',
    readiness: [
      { name: 'messaging', check: () => transport.isReady() },
      { name: 'database', check: async () => (await db.knex.raw('select 1'), true) },
      ...(service.readiness ?? []),
    ],
  });
  await health.listen({ port: common.HEALTH_PORT, host: common.HOST });
  logger.info({ health: `http://${common.HOST}:${(health.server.address() as { port: number }).port}` }, `${module.name} started`);
  onShutdown(logger, async () => {
    await health.close();
    await service.stop();
    await transport.stop();
    await db.close();
    await shutdownTracing();
  });
}

/** Calls `stop` once on SIGTERM/SIGINT, then exits; a second signal exits at once. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop()
      .then(() => process.exit(0))
      .catch((err: Error) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
