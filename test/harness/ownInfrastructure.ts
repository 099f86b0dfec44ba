/**
 * Dependencies a test owns, so that it can stop and start them without touching the machine's
 * shared ones (Postgres on 5432, the registry on 8085, which other tests use at the same time):
 * a Postgres cluster made with `initdb` under a temporary folder on a port of its own, and a schema
 * registry (deploy/local/registry.sh) on its own port and state folder.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, waitFor } from '@efs/testing';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

/** Debian's Postgres server binaries (`/usr/lib/postgresql/<version>/bin`), the newest version; undefined without them. */
export function postgresBinaries(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

export interface OwnPostgres {
  /** Connection string of its `postgres` database (user postgres, trust authentication). */
  adminUrl: string;
  port: number;
  /** `pg_ctl stop -m fast`: every connection is ended, the server is gone until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its folder. */
  destroy(): Promise<void>;
}

/**
 * A Postgres cluster of the test's own. `initdb` refuses to run as root: as root, the cluster
 * belongs to the `postgres` user (Debian's package creates it) and its commands run as that user.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no Postgres server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
  const dir = await mkdtemp(join(tmpdir(), 'efs-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgCommand = (tool: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args));
  await pgCommand('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  // Its socket lives in its own folder; fsync off: nothing here has to survive a power cut.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200 -c shared_buffers=32MB`;
  const start = async () => {
    await pgCommand('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  };
  await start();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    adminUrl,
    port,
    async stop() {
      await pgCommand('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
    async start() {
      await start();
      await waitFor(async () => {
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.end();
        return true;
      }, { timeoutMs: 30_000, what: 'the own Postgres to accept connections' });
    },
    async destroy() {
      if (stopped) return;
      stopped = true;
      await pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnRegistry {
  /** The Confluent-compatible API, as SCHEMA_REGISTRY_URL takes it. */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its state. */
  destroy(): Promise<void>;
}

/**
 * A schema registry of the test's own: deploy/local/registry.sh on a free port with its state
 * (pid file, log, H2 storage, so schemas survive its restart) in a temporary folder.
 */
export async function startOwnRegistry(): Promise<OwnRegistry> {
  const state = await mkdtemp(join(tmpdir(), 'efs-registry-'));
  const port = await freePort();
  const env = { ...process.env, REGISTRY_PORT: String(port), EFS_STATE_DIR: state, REGISTRY_WAIT_TIMEOUT: '180', REGISTRY_HEAP_OPTS: '-Xms64m -Xmx256m' };
  const script = join(root, 'deploy', 'local', 'registry.sh');
  const start = async () => {
    await run('bash', [script, 'start'], { env, timeout: 240_000 });
  };
  const stop = async () => {
    await run('bash', [script, 'stop'], { env, timeout: 60_000 });
  };
  await start();
  let destroyed = false;
  return {
    url: `http://127.0.0.1:${port}/apis/ccompat/v7`,
    start,
    stop,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await stop().catch(() => undefined);
      await rm(state, { recursive: true, force: true });
    },
  };
}
