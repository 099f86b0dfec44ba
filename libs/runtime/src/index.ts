import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { allTopics, ReadingsTopic } from '@efs/contracts';
import { bool, commonEnv, parseConfig, port, type CommonConfig } from '@efs/config';
import { openDatabase, migrateSchema, processOnce, vacuumDueTables, type Database, type Knex, type Migration } from '@efs/db';
import { createHttpServer, type HttpServer, type ReadinessCheck } from '@efs/http';
import { createLogger, type Logger } from '@efs/logging';
import { InProcessTransport, KafkaTransport, type Transport } from '@efs/messaging';
import { initMetrics, initTracing, shutdownTracing } from '@efs/telemetry';
import { processMetrics, serveMetrics } from './processMetrics.ts';
import { PeriodicTask } from './periodicTask.ts';

export { systemClock, type Clock } from './clock.ts';
export { PeriodicTask, STILL_DUE_RETRY_MS, untilDue, type NextDueMs } from './periodicTask.ts';

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
  /** The id of the process's reply topic when this module runs in it (a gateway replica's own id); default `<name>-<host>-<random>`. */
  replyInstanceId?(config: C): string | undefined;
  /**
   * Re-announces the current state of everything the service owns on its state topics, through
   * its outbox inside `trx`, and answers how many events it wrote. Other services' read models
   * apply them like any update (newest `updated_at` wins), which repairs read models that missed
   * events. Run once per deployment after migrations (READ_MODEL_REPAIR) and by `efs read-models rebuild`.
   */
  announceState?(trx: Knex.Transaction): Promise<number>;
}

/**
 * Bumped when a release must repair every read model once (this one: events lost by earlier
 * versions of the in-process transport when the main command crashed or stopped under load).
 */
export const READ_MODEL_REPAIR = 'read-model-repair-2026-12';

/** Re-announces a module's state unless this deployment did it for the current READ_MODEL_REPAIR already. */
async function repairReadModelsOnce(db: Database, m: ServiceModule<any>, logger: Logger): Promise<void> {
  if (!m.schema || !m.announceState) return;
  const { duplicate, result } = await processOnce(db.knex, m.schema, 'efs-read-model-repair', READ_MODEL_REPAIR, (trx) => m.announceState!(trx));
  if (!duplicate && result > 0) logger.info({ schema: m.schema, events: result }, 'state re-announced once to repair read models');
}

export function instanceId(): string {
  return `${hostname().replace(/[^a-zA-Z0-9-]/g, '-').slice(0, 40)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Kafka when KAFKA_BROKERS is set, else the in-process transport. `awaitOpen` (in-process only)
 * holds publishes until the caller has started every service and calls `open()` on it.
 */
export function createTransport(config: CommonConfig, logger: Logger, opts: { replyInstanceId?: string; awaitOpen?: boolean } = {}): Transport {
  if (!config.KAFKA_BROKERS) return new InProcessTransport({ logger, awaitOpen: opts.awaitOpen ?? false });
  return new KafkaTransport({
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter(Boolean),
    clientId: config.KAFKA_CLIENT_ID,
    registryUrl: config.SCHEMA_REGISTRY_URL,
    logger,
    topics: allTopics.map((t) => (t.name === ReadingsTopic.name ? { ...t, partitions: config.TELEMETRY_PARTITIONS } : t)),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    eventCommitIntervalMs: config.KAFKA_EVENT_COMMIT_INTERVAL_MS,
    ...(opts.replyInstanceId ? { replyInstanceId: opts.replyInstanceId } : {}),
  });
}

/** Runs every migration of the given services, each in its own schema (also a Kubernetes job step). */
export async function migrateServices(db: Database, modules: readonly ServiceModule<any>[], logger: Logger): Promise<void> {
  for (const m of modules) {
    if (!m.schema) continue;
    const applied = await migrateSchema(db.knex, m.schema, m.migrations);
    logger.info({ schema: m.schema, applied }, applied.length ? 'migrations applied' : 'schema up to date');
    await repairReadModelsOnce(db, m, logger);
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

type Env = Record<string, string | undefined>;

/** What every process reads besides its services' own variables. */
const ProcessEnv = z.object({
  ...commonEnv,
  HEALTH_PORT: port(0),
  HOST: z.string().default('127.0.0.1'),
  /** Run the services' migrations at start; false when a job runs `efs migrate` before. */
  MIGRATE: bool(true),
});

/** A started process: its services (in start order), connections and root logger. */
export interface RunningProcess {
  readonly logger: Logger;
  readonly transport: Transport;
  readonly db: Database;
  /** The health listener's address (/healthz, /readyz, /metrics). */
  readonly healthUrl: string;
  /** The running service of one of the process's modules. */
  serviceOf<S extends Service>(module: ServiceModule<any, S>): S;
  /** Stops the health listener, the services (last started first), the embedded database's vacuum, the transport, the database and tracing. */
  stop(): Promise<void>;
}

/**
 * The one way a process starts, whether it runs one service (distributed mode), the gateway, or
 * every service (the main command): checks every variable (common and each module's) before
 * opening anything, starts tracing and the root logger, opens the database and migrates the
 * modules' schemas unless MIGRATE=false, starts the transport (with the process's own reply
 * topic) and each module's service in order, and serves /healthz, /readyz and the Prometheus
 * /metrics on HEALTH_PORT (the gateway's listeners answer /healthz and /readyz too, never /metrics). On embedded PGlite it also vacuums what autovacuum would,
 * every EMBEDDED_VACUUM_INTERVAL_MS (`vacuumDueTables`). A failed start stops what it started and
 * releases the database.
 */
export async function startProcess(name: string, modules: readonly ServiceModule<any>[], env: Env = process.env): Promise<RunningProcess> {
  const common = parseConfig(ProcessEnv, env);
  const configs = modules.map((m) => m.config(env) as unknown);
  initTracing({ serviceName: `efs-${name}` });
  initMetrics({ service: name });
  const logger = createLogger({ name, level: common.LOG_LEVEL, bufferMaxBytes: common.LOG_BUFFER_MAX_BYTES });
  const db = await createDatabaseAndMigrate(common, modules, logger, common.MIGRATE);
  const replyInstanceId = modules.map((m, i) => m.replyInstanceId?.(configs[i])).find((id) => id !== undefined) ?? `${name}-${instanceId()}`;
  // Every process can call other services (commissioning asks enrollment, for one), so each has a
  // reply topic. In-process, events flow once every service has subscribed: a relay republishing
  // rows left by a crash must not deliver them before all of their consumers are there.
  const transport = createTransport(common, logger, { replyInstanceId, awaitOpen: true });
  const openTransport = () => transport instanceof InProcessTransport && transport.open();
  const started = new Map<ServiceModule<any>, Service>();
  let health: HttpServer | undefined;
  let healthUrl: string;
  let stopProcessMetrics = () => {};
  // Embedded PGlite has no autovacuum: the process vacuums what it would (vacuumDueTables).
  const vacuumLogger = logger.child({ component: 'embedded-vacuum' });
  const vacuum =
    db.kind === 'pglite' && common.EMBEDDED_VACUUM_INTERVAL_MS > 0
      ? new PeriodicTask({
          run: () => vacuumDueTables(db.knex, vacuumLogger).then(() => undefined),
          pollMs: common.EMBEDDED_VACUUM_INTERVAL_MS,
          logger: vacuumLogger,
          what: 'vacuum of the embedded database',
        })
      : undefined;

  /** Health first, then the edge (the last started) so nothing new arrives, the services, the connections. */
  const close = async (afterFailedStart: boolean) => {
    const steps = [() => health?.close(), ...[...started.values()].reverse().map((s) => () => s.stop()), () => vacuum?.stop(), () => transport.stop(), () => stopProcessMetrics(), () => db.close()];
    for (const step of steps) {
      if (afterFailedStart) await Promise.resolve().then(step).catch(() => undefined);
      else await step();
    }
  };

  try {
    await transport.start();
    for (const [i, m] of modules.entries()) {
      const service = await m.create({ logger, transport, db, config: configs[i] });
      started.set(m, service);
      await service.start();
    }
    stopProcessMetrics = processMetrics(db);
    health = createHttpServer({
      logger,
      name: 'health',
      readiness: [
        { name: 'messaging', check: () => transport.isReady() },
        { name: 'database', check: async () => (await db.knex.raw('select 1'), true) },
        ...[...started.values()].flatMap((s) => s.readiness ?? []),
      ],
    });
    serveMetrics(health, logger);
    await health.listen({ port: common.HEALTH_PORT, host: common.HOST });
    healthUrl = `http://${common.HOST}:${(health.server.address() as { port: number }).port}`;
    logger.info({ health: healthUrl }, 'health listener started');
    openTransport();
    // The first pass after an interval: start-up (migrations, seeding) leaves little to vacuum.
    vacuum?.start(common.EMBEDDED_VACUUM_INTERVAL_MS);
  } catch (err) {
    // A failed start (a port in use, say) stops what it started and releases the database.
    // Relays may be waiting to publish: let them finish their pass rather than wait forever.
    openTransport();
    await close(true);
    throw err;
  }
  logger.info({ services: modules.map((m) => m.name), transport: transport.kind, database: db.kind }, `${name} started`);

  return {
    logger,
    transport,
    db,
    healthUrl,
    serviceOf<S extends Service>(module: ServiceModule<any, S>): S {
      const s = started.get(module);
      if (!s) throw new Error(`${module.name} does not run in this process`);
      return s as S;
    },
    async stop() {
      await close(false);
      await shutdownTracing();
    },
  };
}

/**
 * Runs one service as its own OS process (distributed mode, one container each) until SIGTERM
 * or SIGINT, then stops it cleanly.
 */
export async function runServiceProcess(module: ServiceModule<any>, env: Env = process.env): Promise<RunningProcess> {
  const running = await startProcess(module.name, [module], env);
  onShutdown(running.logger, () => running.stop());
  return running;
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
