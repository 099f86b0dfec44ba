/**
 * The systems the benchmark measures, each started as separate OS processes and stopped again:
 * the bare Fastify reference, the embedded default (`node cli/src/main.ts run` on PGlite) and
 * distributed mode (deploy/local/services.sh on the shared Kafka, registry and Postgres, with a
 * database and topic prefix of its own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, deleteTopicsWithPrefix, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, freePort, testKafkaBrokers, testRegistryUrl } from '@efs/testing';
import { BACKEND_SERVICES } from '../test/harness/distributed.ts';
import { infrastructureSources, pidSource, type CpuSource } from './procCpu.ts';

export const root = join(import.meta.dirname, '..');
export const CLIENT_TOKEN = 'efs_ct_bench_sandbox_client_token_00000000000';
const UTILITY_KEY = 'efs_uk_bench_sandbox_utility_key_000000000000';

export interface MeasuredSystem {
  name: 'bare' | 'embedded' | 'distributed';
  /** Base URL of the public API. */
  url: string;
  /** The system's own Node processes. */
  processes: CpuSource[];
  /** Process id of the embedded system's one process. */
  pid?: number;
  /** Shared infrastructure it uses (Kafka, registry, Postgres): also used by whoever else shares the machine. */
  infrastructure: CpuSource[];
  /** Profiles this system writes when it stops, by process name. */
  profiles: Record<string, string>;
  stop(): Promise<void>;
}

/** Undo steps of everything started so far, run in reverse on stop, failure or Ctrl-C. */
export class Cleanup {
  private readonly steps: { what: string; run: () => Promise<void> }[] = [];
  /** Detached children still alive, killed synchronously if the bench exits without cleaning up. */
  readonly children = new Set<ChildProcess>();
  private closed = false;

  add(what: string, run: () => Promise<void>): () => Promise<void> {
    const step = { what, run };
    this.steps.push(step);
    return async () => {
      const i = this.steps.indexOf(step);
      if (i < 0) return;
      this.steps.splice(i, 1);
      await run();
    };
  }

  async runAll(): Promise<void> {
    this.closed = true;
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      await step.run().catch((err: Error) => console.error(`cleanup: ${step.what} failed: ${err.message}`));
    }
  }

  /** Once cleaning up has begun (Ctrl-C), nothing new may start. */
  assertOpen(): void {
    if (this.closed) throw new Error('the bench is stopping');
  }

  killRemaining(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

/** Starts a process in its own process group (Ctrl-C reaches only the bench, which stops it in order), output to a log file. */
export function launch(cleanup: Cleanup, command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd: root, env, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  cleanup.children.add(child);
  child.once('exit', () => cleanup.children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process has exited. */
export async function stopChild(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

async function waitReady(url: string, what: string, child?: ChildProcess, logFile?: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`${what} exited before it was ready${logFile ? `:\n${tail(logFile)}` : ''}`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs / 1000} s${logFile ? `:\n${tail(logFile)}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Environment every measured system shares: sandbox credentials known to the bench, no rate limit in the way. */
export function systemEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX_CLIENT_TOKEN: CLIENT_TOKEN,
    SANDBOX_UTILITY_API_KEY: UTILITY_KEY,
    // The client token's default limit (1,200 a minute) would turn the run into 429s.
    RATE_LIMIT_CLIENT: '1000000000',
    // Sealing the stored signing keys needs a key-encryption key; the bench uses the development one unless given its own.
    SIGNING_KEY_ENCRYPTION_KEY: process.env.SIGNING_KEY_ENCRYPTION_KEY ?? DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
  };
  // The bench decides the mode, not whatever the calling shell points at.
  for (const k of ['DATABASE_URL', 'KAFKA_BROKERS', 'KAFKA_TOPIC_PREFIX', 'DATA_DIR', 'PORT', 'UTILITY_PORT', 'PORTAL_PORT', 'HEALTH_PORT', 'NODE_OPTIONS']) delete env[k];
  return env;
}

/** The main command in its default mode: every service in one process, in-process transport, PGlite in a data folder of its own. */
export async function startEmbedded(cleanup: Cleanup, runDir: string, profileDir?: string, nodeArgs: readonly string[] = []): Promise<MeasuredSystem> {
  cleanup.assertOpen();
  const dataDir = join(runDir, 'embedded-data');
  const logFile = join(runDir, 'embedded.log');
  const [pub, util, portal] = [await freePort(), await freePort(), await freePort()];
  const prof = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-name=embedded.cpuprofile'] : [];
  const env = { ...systemEnv(), DATA_DIR: dataDir, PORT: String(pub), UTILITY_PORT: String(util), PORTAL_PORT: String(portal) };
  const child = launch(cleanup, process.execPath, [...prof, ...nodeArgs, 'cli/src/main.ts', 'run'], env, logFile);
  const stop = cleanup.add('stop the embedded system', async () => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${pub}`;
  await waitReady(`${url}/readyz`, 'the embedded system', child, logFile);
  return {
    name: 'embedded',
    url,
    processes: [pidSource('efs run', child.pid!)],
    pid: child.pid!,
    infrastructure: [],
    profiles: profileDir ? { 'efs run': join(profileDir, 'embedded.cpuprofile') } : {},
    stop,
  };
}

/** A port from which `count` consecutive ports are free (services.sh numbers the health ports from a base). */
async function freePortRange(count: number): Promise<number> {
  const { createServer } = await import('node:net');
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
}

async function runScript(args: string[], env: NodeJS.ProcessEnv, logFile: string, cleanup: Cleanup): Promise<void> {
  const child = launch(cleanup, 'bash', args, env, logFile);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`bash ${args.join(' ')} failed (${code}):\n${tail(logFile)}`);
}

/**
 * Distributed mode as `make up` runs it (deploy/local/services.sh: migrations once, then one
 * process per service), on the shared Kafka and registry, with a fresh database and topic prefix.
 */
export async function startDistributed(cleanup: Cleanup, runDir: string, profileDir?: string, profiled: readonly string[] = []): Promise<MeasuredSystem> {
  cleanup.assertOpen();
  const database = await createTestDatabase('efs_bench');
  const dropDatabase = cleanup.add(`drop database ${database.name}`, () => database.drop());
  const topicPrefix = `bench${randomBytes(4).toString('hex')}.`;
  const deleteTopics = cleanup.add(`delete topics ${topicPrefix}*`, () => deleteTopicsWithPrefix(topicPrefix));
  const serviceDir = join(runDir, 'distributed');
  const logFile = join(runDir, 'services.log');
  const [pub, util, portal] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...systemEnv(),
    DATABASE_URL: database.url,
    KAFKA_BROKERS: testKafkaBrokers(),
    SCHEMA_REGISTRY_URL: testRegistryUrl(),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    EFS_RUN_DIR: serviceDir,
    HEALTH_PORT_BASE: String(await freePortRange(BACKEND_SERVICES.length)),
    PORT: String(pub),
    UTILITY_PORT: String(util),
    PORTAL_PORT: String(portal),
    ...(profileDir ? { EFS_CPU_PROF_DIR: profileDir, EFS_CPU_PROF_SERVICES: profiled.join(' ') } : {}),
  };
  const script = join(root, 'deploy', 'local', 'services.sh');
  // services.sh down stops whatever has a pid file, so it also cleans up after a start that failed half-way.
  const stopServices = cleanup.add('stop the distributed services', () => runScript([script, 'down'], env, logFile, cleanup));
  cleanup.assertOpen();
  await runScript([script, 'up'], env, logFile, cleanup);
  const names = ['gateway', ...BACKEND_SERVICES];
  const processes = names.map((n) => pidSource(n, Number(readFileSync(join(serviceDir, `${n}.pid`), 'utf8').trim())));
  return {
    name: 'distributed',
    url: `http://127.0.0.1:${pub}`,
    processes,
    infrastructure: infrastructureSources(),
    profiles: Object.fromEntries(profiled.map((n) => [n, join(profileDir ?? '', `${n}.cpuprofile`)])),
    async stop() {
      await stopServices();
      await deleteTopics();
      await dropDatabase();
    },
  };
}

/** The bare Fastify reference, serving the bodies captured from a real system. */
export async function startBare(cleanup: Cleanup, runDir: string, bodies: unknown): Promise<MeasuredSystem> {
  cleanup.assertOpen();
  const bodiesFile = join(runDir, 'bare-bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  const logFile = join(runDir, 'bare.log');
  const port = await freePort();
  const env = systemEnv();
  const child = launch(cleanup, process.execPath, ['bench/bareServer.ts', String(port), bodiesFile], env, logFile);
  const stop = cleanup.add('stop the bare Fastify', () => stopChild(child));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/v1/programs`, 'the bare Fastify', child, logFile);
  return { name: 'bare', url, processes: [pidSource('bare fastify', child.pid!)], infrastructure: [], profiles: {}, stop };
}
