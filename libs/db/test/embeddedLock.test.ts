import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@efs/db';
import { createLogger } from '@efs/logging';

const logger = createLogger({ name: 'test', level: 'silent' });

/** Opens the embedded database in another process and answers what happened there. */
async function openInAnotherProcess(dataDir: string): Promise<string> {
  const script = `
    import { openDatabase } from '@efs/db';
    import { createLogger } from '@efs/logging';
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
describe('embedded database folder lock', () => {
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
});
