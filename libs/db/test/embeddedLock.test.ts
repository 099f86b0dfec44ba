import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@efs/db';
import { createLogger } from '@efs/logging';
import { DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, waitFor } from '@efs/testing';

const logger = createLogger({ name: 'test', level: 'silent' });

/** Opens the embedded database in another process and answers what happened there. */
async function openInAnotherProcess(dataDir: string): Promise<string> {
  const script = `
    import { openDatabase } from '@efs/db';
    import { createLogger } from '@efs/logging';
import { DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, waitFor } from '@efs/testing';
    try {
      const db = await openDatabase({ dataDir: ${JSON.stringify(dataDir)}, logger: createLogger({ name: 'child', level: 'silent' }) });
      await db.knex.raw('select 1');
      await db.close();
      process.stdout.write('opened');
    } catch (err) {
      process.stdout.write('refused: ' + err.message);
    }`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd() });
  return stdout;
}

/**
 * PGlite keeps no lock on its folder: two processes on one folder each run a Postgres over the
 * same files and lose each other's commits. openDatabase holds the folder for one process.
 */
// Each case opens PGlite (seconds apiece on a busy machine), some several times.
describe('embedded database folder lock', { timeout: 120_000 }, () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'efs-lock-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('refuses a second process while one holds the folder, and lets it in once the first closed', async () => {
    const dataDir = join(root, 'a');
    const db = await openDatabase({ dataDir, logger });
    try {
      const answer = await openInAnotherProcess(dataDir);
      expect(answer).toContain(`refused: the embedded database in ${dataDir} is in use by process ${process.pid}`);
      await expect(openDatabase({ dataDir, logger })).rejects.toThrow(/in use by process \d+ \(this one\)/);
      expect((await db.knex.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    expect(await openInAnotherProcess(dataDir)).toBe('opened');
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dataDir = join(root, 'b');
    await writeFile(`${dataDir}.lock`, '2147483646\n');
    const db = await openDatabase({ dataDir, logger });
    await db.close();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it('names its holder by pid, boot id and start time', async () => {
    const dataDir = join(root, 'c');
    const db = await openDatabase({ dataDir, logger });
    try {
      const [pid, bootId, startTime] = readFileSync(`${dataDir}.lock`, 'utf8').split('\n');
      expect(pid).toBe(String(process.pid));
      if (existsSync('/proc/sys/kernel/random/boot_id')) {
        expect(bootId).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
        expect(startTime).toMatch(/^\d+$/);
      }
    } finally {
      await db.close();
    }
  });

  it.runIf(existsSync('/proc/self/stat'))('takes over a lock naming this process\'s pid that an earlier process with the same pid left (other start time, other boot, or an old pid-only lock)', async () => {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const startTime = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]!;
    for (const [name, content] of [
      ['d', `${process.pid}\n${bootId}\n${Number(startTime) + 1}\n`],
      ['e', `${process.pid}\n00000000-0000-0000-0000-000000000000\n${startTime}\n`],
      ['f', `${process.pid}\n`],
    ] as const) {
      const dataDir = join(root, name);
      await writeFile(`${dataDir}.lock`, content);
      const db = await openDatabase({ dataDir, logger });
      await db.close();
      expect(existsSync(`${dataDir}.lock`), name).toBe(false);
    }
  });

  it.runIf(existsSync('/proc/self/stat'))('refuses a lock of another live process, and takes over one whose pid now belongs to a process started later', async () => {
    const other = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const startTime = readFileSync(`/proc/${other.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;
      const live = join(root, 'g');
      await writeFile(`${live}.lock`, `${other.pid}\n${bootId}\n${startTime}\n`);
      await expect(openDatabase({ dataDir: live, logger })).rejects.toThrow(`in use by process ${other.pid}:`);
      const reused = join(root, 'h');
      await writeFile(`${reused}.lock`, `${other.pid}\n${bootId}\n${Number(startTime) - 1}\n`);
      const db = await openDatabase({ dataDir: reused, logger });
      await db.close();
    } finally {
      other.kill('SIGKILL');
    }
  });
});

/** Whether this machine lets the test run a process as pid 1 of a new pid namespace (as a container does). */
function canRunAsPid1(): boolean {
  try {
    return execFileSync('unshare', ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', 'sh', '-c', 'echo $$'], { encoding: 'utf8', timeout: 5000 }).trim() === '1';
  } catch {
    return false;
  }
}

/**
 * The case that stopped containers: the main command runs as pid 1, crashes (SIGKILL leaves its
 * lock behind), and the restarted container runs it as pid 1 again. It must start.
 */
describe.runIf(canRunAsPid1())('embedded database lock in a container restarted after a crash', { timeout: 300_000 }, () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'efs-lock-pid1-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** The main command as pid 1 of its own pid namespace; resolves once it serves, with its host pid. */
  async function runAsPid1(dataDir: string): Promise<{ hostPid: number; exited: Promise<unknown> }> {
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      UTILITY_PORT: '0',
      PORTAL_PORT: '0',
      LOG_LEVEL: 'warn',
      SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
    };
    const child = spawn('unshare', ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, 'cli/src/main.ts', 'run'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => child.once('exit', r));
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.includes('is running') || child.exitCode !== null, { timeoutMs: 120_000, what: 'the main command to start' });
    expect(out, out).toContain('is running');
    // The main command is the only child of unshare: its pid on the host.
    const hostPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
    return { hostPid, exited };
  }

  it('starts again as pid 1 after the previous pid 1 was killed holding the lock', async () => {
    const dataDir = join(root, 'pgdata');
    const first = await runAsPid1(root);
    expect(readFileSync(join(root, 'pgdata.lock'), 'utf8').split('\n')[0]).toBe('1');
    process.kill(first.hostPid, 'SIGKILL');
    await first.exited;
    expect(existsSync(`${dataDir}.lock`)).toBe(true);
    const second = await runAsPid1(root);
    expect(readFileSync(join(root, 'pgdata.lock'), 'utf8').split('\n')[0]).toBe('1');
    process.kill(second.hostPid, 'SIGTERM');
    await second.exited;
  });
});
