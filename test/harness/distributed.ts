import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  apiClient,
  createTestDatabase,
  deleteTopicsWithPrefix,
  freePort,
  DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
  SANDBOX_CLIENT_TOKEN,
  SANDBOX_UTILITY_API_KEY,
  testKafkaBrokers,
  testRegistryUrl,
  waitFor,
  type ApiClient,
  type TestDatabase,
} from '@efs/testing';

const root = join(import.meta.dirname, '..', '..');
export const BACKEND_SERVICES = ['program-catalog', 'commissioning', 'enrollment', 'event-dispatch', 'telemetry-ingest', 'webhooks'] as const;


interface Proc {
  name: string;
  child: ChildProcess;
  output: string[];
  readyUrl: string;
}

export interface DistributedSystem {
  database: TestDatabase;
  topicPrefix: string;
  env: Record<string, string>;
  urls: { public: string; utility: string; portal: string };
  api: ApiClient;
  utility: ApiClient;
  /** Last lines a process printed (for failure messages): 40 by default, at most the 200 kept. */
  logs(name: string, lines?: number): string;
  /** Each process's health listener as a scrape target: its service name and `host:port` (/metrics there). */
  scrapeTargets(): { job: string; target: string }[];
  /** GET /metrics of a back-end service's process (its health port). */
  metricsUrl(name: (typeof BACKEND_SERVICES)[number]): string;
  /** The OS process id of a running service (the first of that name). */
  pid(name: string): number | undefined;
  /** Kills a service's process with a signal (SIGKILL: a crash) and waits for it to exit. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a killed service again with the same environment; resolves once it is ready. */
  restart(name: string): Promise<void>;
  /** Starts one more gateway replica (its own process and reply topic) on the same deployment. */
  addGateway(): Promise<{ url: string; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

function launch(name: string, env: Record<string, string>, readyUrl: string): Proc {
  const child = spawn(process.execPath, [join(root, 'services', name, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (b: Buffer) => {
    output.push(...b.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, child, output, readyUrl };
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/**
 * The distributed mode for tests: every service its own OS process (node services/<name>/src/main.ts)
 * on the real Kafka and registry, a fresh Postgres database, and a topic prefix of its own.
 * `postgresAdminUrl` puts the database on another server than the shared one (a test's own
 * cluster, which it stops and starts); `extraEnv` overrides any variable (SCHEMA_REGISTRY_URL: a
 * registry of the test's own).
 */
export async function startDistributedSystem(extraEnv: Record<string, string> = {}, opts: { postgresAdminUrl?: string } = {}): Promise<DistributedSystem> {
  const database = await createTestDatabase('efs_t', opts.postgresAdminUrl);
  const topicPrefix = `t${randomBytes(4).toString('hex')}.`;
  // Every port is chosen before any process starts: once they run, their outgoing connections take ephemeral ports too.
  const [pub, util, portal, gatewayHealth] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const healthPorts = new Map<string, number>();
  for (const name of BACKEND_SERVICES) healthPorts.set(name, await freePort());
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    DATABASE_URL: database.url,
    KAFKA_BROKERS: testKafkaBrokers(),
    SCHEMA_REGISTRY_URL: testRegistryUrl(),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    SANDBOX_CLIENT_TOKEN,
    SANDBOX_UTILITY_API_KEY,
    SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
    SANDBOX_AUTO_APPROVE_DELAY_MS: '300',
    VALIDATE_REPLIES: 'true',
    ...extraEnv,
  };
  const procs: Proc[] = [];
  /** The environment each service was launched with, to restart it alike. */
  const launched = new Map<string, Record<string, string>>();
  const stop = async () => {
    for (const p of [...procs].reverse()) await stopProc(p);
    await database.drop();
    await deleteTopicsWithPrefix(topicPrefix).catch(() => undefined);
  };
  try {
    for (const name of BACKEND_SERVICES) {
      const port = healthPorts.get(name)!;
      launched.set(name, { ...env, HEALTH_PORT: String(port) });
      procs.push(launch(name, launched.get(name)!, `http://127.0.0.1:${port}/readyz`));
    }
    const ready = async (p: Proc) => {
      const exited = new Promise<never>((_, reject) =>
        p.child.once('exit', (code) => setTimeout(() => reject(new Error(`${p.name} exited (${code}):\n${p.output.slice(-20).join('\n')}`)), 100)),
      );
      exited.catch(() => undefined);
      await Promise.race([exited, waitFor(async () => (await fetch(p.readyUrl)).ok, { timeoutMs: 180_000, intervalMs: 250, what: `${p.name} ready` })]);
    };
    await Promise.all(procs.map(ready));
    launched.set('gateway', { ...env, PORT: String(pub), UTILITY_PORT: String(util), PORTAL_PORT: String(portal), HEALTH_PORT: String(gatewayHealth) });
    const gw = launch('gateway', launched.get('gateway')!, `http://127.0.0.1:${pub}/readyz`);
    procs.push(gw);
    await ready(gw);
  } catch (err) {
    await stop();
    throw err;
  }
  const urls = { public: `http://127.0.0.1:${pub}`, utility: `http://127.0.0.1:${util}`, portal: `http://127.0.0.1:${portal}` };
  return {
    database,
    topicPrefix,
    env,
    urls,
    api: apiClient(urls.public, SANDBOX_CLIENT_TOKEN),
    utility: apiClient(urls.utility, SANDBOX_UTILITY_API_KEY),
    logs: (name, lines = 40) => procs.find((p) => p.name === name)?.output.slice(-lines).join('\n') ?? '',
    scrapeTargets: () => [...launched].map(([job, e]) => ({ job, target: `127.0.0.1:${e.HEALTH_PORT}` })),
    metricsUrl: (name) => `http://127.0.0.1:${launched.get(name)!.HEALTH_PORT}/metrics`,
    pid: (name) => procs.find((p) => p.name === name && p.child.exitCode === null && p.child.signalCode === null)?.child.pid,
    async kill(name, signal = 'SIGKILL') {
      const p = procs.find((x) => x.name === name && x.child.exitCode === null && x.child.signalCode === null);
      if (!p) throw new Error(`${name} is not running`);
      const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
      p.child.kill(signal);
      await exited;
    },
    async restart(name) {
      const old = procs.find((x) => x.name === name);
      if (!old) throw new Error(`no ${name} in this system`);
      const again = launch(name, launched.get(name)!, old.readyUrl);
      procs.splice(procs.indexOf(old), 1, again);
      await waitFor(async () => (await fetch(again.readyUrl)).ok, { timeoutMs: 90_000, intervalMs: 250, what: `${name} ready again` });
    },
    async addGateway() {
      const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
      const extra = launch('gateway', { ...env, PORT: String(p1), UTILITY_PORT: String(p2), PORTAL_PORT: String(p3) }, `http://127.0.0.1:${p1}/readyz`);
      procs.push(extra);
      await waitFor(async () => (await fetch(extra.readyUrl)).ok, { timeoutMs: 90_000, intervalMs: 250, what: 'second gateway ready' });
      return { url: `http://127.0.0.1:${p1}`, stop: () => stopProc(extra) };
    },
    stop,
  };
}
