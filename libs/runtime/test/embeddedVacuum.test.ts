import { isDeepStrictEqual as deepEqual } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startProcess } from '@efs/runtime';
import { churnedTable, deadRows, waitFor } from '@efs/testing';

/** The main command's process on embedded PGlite (no autovacuum) vacuums on its own. */
describe('a process on embedded PGlite vacuums what autovacuum would', { timeout: 120_000 }, () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'efs-process-vacuum-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('every EMBEDDED_VACUUM_INTERVAL_MS', async () => {
    const running = await startProcess('vacuum-test', [], { DATA_DIR: join(root, 'on'), EMBEDDED_VACUUM_INTERVAL_MS: '100', LOG_LEVEL: 'silent', HEALTH_PORT: '0', HOST: '127.0.0.1' });
    try {
      await churnedTable(running.db.knex);
      // A pass between the inserts and the deletes' counters being flushed vacuums too early: the next one takes the rest.
      await waitFor(async () => deepEqual(await deadRows(running.db.knex), { dead: 0, vacuumed: true }), { timeoutMs: 20_000, what: 'q.outbox vacuumed, no dead rows left' });
    } finally {
      await running.stop();
    }
  });
});
