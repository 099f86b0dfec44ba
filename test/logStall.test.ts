/**
 * Logging never stops the service (issue 25). `node cli/src/main.ts run` writes its log to a
 * reader that stops reading: a Node parent's pipe it does not read, and a socket nobody reads.
 * Before, the first full pipe held the event loop for good (every request and health check hung)
 * or the retries overflowed the stack. Now, with a small LOG_BUFFER_MAX_BYTES, the process holds
 * that much, drops the rest and counts it, answers every request meanwhile, and once the reader
 * reads again writes a warning line with the number of lines dropped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, freePort, SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, waitFor } from '@efs/testing';

const BUFFER = 64 * 1024;
/** Requests driven while nobody reads: their access lines (~500 bytes each) are three times the buffer, the kernel's socket buffers and what the parent reads ahead. */
const REQUESTS = 2000;

interface LogLine {
  level: string;
  msg: string;
  dropped_lines?: number;
}

describe('the main command whose log reader stops reading', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  /** Starts the main command with stdout `stdout`, waits until it answers /healthz (never reading its stdout). */
  const start = async (stdout: 'pipe' | Socket) => {
    const dir = await mkdtemp(join(tmpdir(), 'efs-log-stall-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    const env = {
      ...process.env,
      DATA_DIR: dir,
      LOG_LEVEL: 'info',
      LOG_BUFFER_MAX_BYTES: String(BUFFER),
      PORT: String(port),
      UTILITY_PORT: String(await freePort()),
      PORTAL_PORT: String(await freePort()),
      SANDBOX_CLIENT_TOKEN,
      SANDBOX_UTILITY_API_KEY,
      SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
      RATE_LIMIT_CLIENT: '1000000',
      RATE_LIMIT_SITE: '1000000',
    };
    const child = spawn(process.execPath, ['cli/src/main.ts', 'run'], { cwd: process.cwd(), env, stdio: ['ignore', stdout, 'pipe'] });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the main command exited:\n${stderr}`);
        return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined))?.ok;
      },
      { timeoutMs: 90_000, intervalMs: 100, what: 'the main command to start' },
    );
    return { child, base, exited, stderr: () => stderr };
  };

  /** GET /healthz and the programs as the sandbox client, 8 at a time: every one answered 200, each within 5 s. */
  const drive = async (base: string, count: number) => {
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < count; i = next++) {
        const path = i % 2 === 0 ? '/healthz' : '/v1/programs';
        try {
          const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${SANDBOX_CLIENT_TOKEN}` }, signal: AbortSignal.timeout(5000) });
          await r.arrayBuffer();
          if (r.status !== 200) failures.push(`${path}: ${r.status}`);
        } catch (err) {
          failures.push(`${path}: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return failures;
  };

  /** Reads `from` from now on; the log lines read so far (the start-up banner is not one). */
  const readAll = (from: Readable) => {
    let text = '';
    from.on('data', (b: Buffer) => (text += b.toString()));
    from.resume();
    return () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
  };

  const scenario = async (m: Awaited<ReturnType<typeof start>>, reader: () => Readable) => {
    const failures = await drive(m.base, REQUESTS);
    expect(failures.slice(0, 5), `${failures.length} of ${REQUESTS} requests failed`).toEqual([]);
    expect(m.child.exitCode, m.stderr()).toBeNull();

    // The reader is back: what was held comes out, then the warning with the count.
    const lines = readAll(reader());
    const warning = await waitFor(() => lines().find((l) => l.dropped_lines !== undefined), { timeoutMs: 20_000, intervalMs: 50, what: 'the warning of the dropped lines' });
    expect(warning).toMatchObject({ level: 'warn' });
    expect(warning.dropped_lines).toBeGreaterThan(0);
    // Logging goes on after the gap, and the process answers as before.
    expect(await drive(m.base, 20)).toEqual([]);
    await waitFor(
      () => {
        const all = lines();
        return all.slice(all.findIndex((l) => l.dropped_lines !== undefined) + 1).filter((l) => l.msg === 'request completed').length >= 20;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'the lines of the requests after the gap' },
    );
    m.child.kill('SIGTERM');
    await m.exited;
    expect(m.child.exitCode, m.stderr()).toBe(0);
    expect(m.stderr()).not.toMatch(/RangeError|Maximum call stack/);
  };

  it('a pipe its Node parent does not read', { timeout: 180_000 }, async () => {
    const m = await start('pipe');
    // Nothing reads it: no 'data' listener, so the parent's side never reads the pipe.
    await scenario(m, () => (m.child as ChildProcess).stdout!);
  });

  it('a socket nobody reads', { timeout: 180_000 }, async () => {
    let accepted: Socket | undefined;
    const server: Server = createServer((s) => {
      accepted = s;
      s.pause();
    });
    const path = join(await mkdtemp(join(tmpdir(), 'efs-log-sock-')), 'log.sock');
    await new Promise<void>((r) => server.listen(path, r));
    cleanups.push(async () => {
      accepted?.destroy();
      await new Promise((r) => server.close(r));
      await rm(join(path, '..'), { recursive: true, force: true });
    });
    const out = createConnection(path);
    await new Promise((r) => out.once('connect', r));
    const m = await start(out);
    out.destroy(); // the child has its own copy of the descriptor
    await scenario(m, () => accepted!);
  });
});
