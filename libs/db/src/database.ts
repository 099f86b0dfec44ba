import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '@efs/logging';
import { SpanKind, tracer, tracesRecorded } from '@efs/telemetry';
import { context, trace, SpanStatusCode, type Span } from '@opentelemetry/api';

export type { Knex } from 'knex';

export interface Database {
  readonly knex: Knex;
  readonly kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

interface DatabaseOptions {
  /** Postgres connection string; without it an embedded PGlite database is kept under dataDir. */
  url?: string | undefined;
  dataDir: string;
  logger: Logger;
  poolMax?: number;
  /** Labels SQL spans with the service that runs them. */
  service?: string;
}

/**
 * Opens Postgres (a pool per service) or, for the zero-setup default, embedded PGlite (one
 * connection, shared by every service of the process, so services must qualify their tables
 * with their own schema rather than rely on search_path).
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  let knex: Knex;
  let kind: Database['kind'];
  let unlock = () => {};
  if (opts.url) {
    kind = 'postgres';
    knex = knexFactory({
      client: 'pg',
      connection: opts.url,
      pool: { min: 0, max: opts.poolMax ?? 10 },
      acquireConnectionTimeout: 10_000,
    });
  } else {
    kind = 'pglite';
    mkdirSync(opts.dataDir, { recursive: true });
    unlock = lockDataDir(opts.dataDir);
    const { default: ClientPgLite } = await import('knex-pglite');
    knex = knexFactory({ client: ClientPgLite, dialect: 'postgres', connection: { filename: opts.dataDir } } as Knex.Config);
  }
  traceQueries(knex, opts.service ?? 'efs');
  try {
    await knex.raw('select 1');
  } catch (err) {
    await knex.destroy().catch(() => undefined);
    unlock();
    throw err;
  }
  opts.logger.info({ kind, ...(kind === 'pglite' ? { data_dir: opts.dataDir } : {}) }, 'database connected');
  return {
    knex,
    kind,
    async close() {
      await knex.destroy();
      unlock();
    },
  };
}

/**
 * Holds an embedded database folder for this process. PGlite has no lock of its own: a second
 * process on the same folder runs a second Postgres over the same files, each with its own
 * buffers and WAL, and commits of one are lost when the other writes (a second `efs run`, or a
 * credentials command while `efs run` is up). The lock file names the holding process by pid,
 * boot id and start time; one left by a process that is gone is taken over. A pid alone is not
 * enough: a container restarted after a crash runs the main command as pid 1 again, and the pid
 * of a process from before a reboot may be anyone's now. Returns the release.
 */
function lockDataDir(dataDir: string): () => void {
  const path = `${dataDir}.lock`;
  const me = processIdentity(process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${me.pid}\n${me.bootId ?? ''}\n${me.startTime ?? ''}\n`);
      closeSync(fd);
      return () => {
        try {
          if (sameHolder(parseHolder(readFileSync(path, 'utf8')), me)) unlinkSync(path);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    let holder: Holder | undefined;
    try {
      holder = parseHolder(readFileSync(path, 'utf8'));
    } catch {
      /* removed meanwhile: try again */
    }
    if (holder && holderRuns(holder, me)) {
      const self = holder.pid === me.pid;
      throw new Error(
        `the embedded database in ${dataDir} is in use by process ${holder.pid}${self ? ' (this one)' : ''}: it allows one process at a time. ` +
          `Stop that process first (or use another DATA_DIR, or DATABASE_URL); if no such process runs, delete ${path}.`,
      );
    }
    try {
      unlinkSync(path);
    } catch {
      /* removed meanwhile */
    }
  }
}

/** A process as the lock file names it; boot id and start time are absent where /proc is not (macOS) or in old lock files. */
interface Holder {
  pid: number;
  bootId: string | undefined;
  startTime: string | undefined;
}

function parseHolder(text: string): Holder | undefined {
  const [pid, bootId, startTime] = text.split('\n').map((l) => l.trim());
  const n = Number.parseInt(pid ?? '', 10);
  if (!Number.isInteger(n) || n <= 0) return undefined;
  return { pid: n, bootId: bootId || undefined, startTime: startTime || undefined };
}

function processIdentity(pid: number): Holder {
  return { pid, bootId: readProc('/proc/sys/kernel/random/boot_id'), startTime: processStartTime(pid) };
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat: clock ticks from boot to the process's start (the name before it may hold spaces). */
function processStartTime(pid: number): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function sameHolder(a: Holder | undefined, b: Holder): boolean {
  return a !== undefined && a.pid === b.pid && a.bootId === b.bootId && a.startTime === b.startTime;
}

/** Whether the process that wrote the lock still runs: same pid, same boot, same start time. */
function holderRuns(holder: Holder, me: Holder): boolean {
  // Our own pid: only a lock this very process wrote (same boot, same start) is ours; any other
  // was left by an earlier process that had our pid (a container's pid 1 before its restart).
  if (holder.pid === me.pid) return sameHolder(holder, me);
  if (!isAlive(holder.pid)) return false;
  if (holder.bootId && me.bootId && holder.bootId !== me.bootId) return false;
  const startTime = holder.startTime ? processStartTime(holder.pid) : undefined;
  return !(startTime && startTime !== holder.startTime);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One client span per SQL statement, child of whatever span issued it. */
function traceQueries(knex: Knex, service: string): void {
  const spans = new Map<string, Span>();
  knex.on('query', (q: { __knexQueryUid: string; sql: string; method?: string }) => {
    // A statement's span is never a parent: unrecorded, it would carry nothing to anyone.
    if (!tracesRecorded()) return;
    const span = tracer().startSpan(
      `sql ${q.method ?? 'query'}`,
      { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.text': q.sql.slice(0, 500), 'efs.service': service } },
      context.active(),
    );
    spans.set(q.__knexQueryUid, span);
  });
  const end = (err: Error | null, q: { __knexQueryUid: string }) => {
    const span = spans.get(q.__knexQueryUid);
    if (!span) return;
    spans.delete(q.__knexQueryUid);
    if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    span.end();
  };
  knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string }) => end(null, q));
  knex.on('query-error', (err: Error, q: { __knexQueryUid: string }) => end(err, q));
  void trace;
}
