import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { apiClient, waitFor, type ApiClient } from './http.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl } from './infra.ts';
import { SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY } from './system.ts';

const root = join(import.meta.dirname, '..', '..', '..');
export const BACKEND_SERVICES = ['program-catalog', 'commissioning', 'enrollment', 'event-dispatch', 'telemetry-ingest'] as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

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
  /** Last lines a process printed (for failure messages). */
  logs(name: string): string;
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
 */
export async function startDistributedSystem(extraEnv: Record<string, string> = {}): Promise<DistributedSystem> {
  const database = await createTestDatabase();
  const topicPrefix = `t${randomBytes(4).toString('hex')}.`;
  const [pub, util, portal] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    DATABASE_URL: database.url,
    KAFKA_BROKERS: testKafkaBrokers(),
    SCHEMA_REGISTRY_URL: testRegistryUrl(),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    SANDBOX_CLIENT_TOKEN,
    SANDBOX_UTILITY_API_KEY,
    SANDBOX_AUTO_APPROVE_DELAY_MS: '300',
    ...extraEnv,
  };
  const procs: Proc[] = [];
  const stop = async () => {
    for (const p of [...procs].reverse()) await stopProc(p);
    await database.drop();
    await deleteTopicsWithPrefix(topicPrefix).catch(() => undefined);
  };
  try {
    for (const name of BACKEND_SERVICES) {
      const port = await freePort();
      procs.push(launch(name, { ...env, HEALTH_PORT: String(port) }, `http://127.0.0.1:${port}/readyz`));
    }
    const ready = async (p: Proc) => {
      const exited = new Promise<never>((_, reject) =>
        p.child.once('exit', (code) => setTimeout(() => reject(new Error(`${p.name} exited (${code}):\n${p.output.slice(-20).join('\n')}`)), 100)),
      );
      exited.catch(() => undefined);
      await Promise.race([exited, waitFor(async () => (await fetch(p.readyUrl)).ok, { timeoutMs: 90_000, intervalMs: 250, what: `${p.name} ready` })]);
    };
    await Promise.all(procs.map(ready));
    const gw = launch('gateway', { ...env, PORT: String(pub), UTILITY_PORT: String(util), PORTAL_PORT: String(portal) }, `http://127.0.0.1:${pub}/readyz`);
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
    logs: (name) => procs.find((p) => p.name === name)?.output.slice(-40).join('\n') ?? '',
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
