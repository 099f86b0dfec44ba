/**
 * The commission storm of issue 15 against the main command in its default mode (`efs run`:
 * one process, in-process transport, PGlite), started as a process of its own; this process only
 * drives the load (bench/stormDriver.ts) and reads the outcome through the API.
 *
 *   node bench/commissionStorm.ts                          # 1,000 concurrent commissions
 *   node bench/commissionStorm.ts --count 2000 --env GATEWAY_MAX_IN_FLIGHT=512
 *   node bench/commissionStorm.ts --url http://127.0.0.1:8080 --token efs_ct_...   # a running system
 *
 * Prints the first answers by status (503s split into shed and not answered in time), how many
 * sites were stored, the two counts that must be 0 (a 200 not stored, a refusal stored anyway),
 * the retries with the same Idempotency-Key by status (a 200 must be replayed as it was, nothing
 * may answer 409), the sites stored in the end, and the command that produced them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runStorm } from './stormDriver.ts';
import { CLIENT_TOKEN, Cleanup, root, startEmbedded } from './systems.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    url: { type: 'string' },
    token: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});

const cleanup = new Cleanup();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    cleanup.killRemaining();
    void cleanup.runAll().finally(() => process.exit(130));
  });
}
process.on('exit', () => cleanup.killRemaining());

try {
  let url = values.url;
  let token = values.token ?? CLIENT_TOKEN;
  if (!url) {
    const runDir = join(root, '.run', 'bench', `storm-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(runDir, { recursive: true });
    for (const kv of values.env) {
      const i = kv.indexOf('=');
      process.env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    const sys = await startEmbedded(cleanup, runDir);
    url = sys.url;
    token = CLIENT_TOKEN;
    console.log(`embedded system at ${url} (logs in ${runDir})`);
  }
  const r = await runStorm({ url, clientToken: token, count: Number(values.count) });
  const line = (k: string, v: unknown) => console.log(`${k.padEnd(34)} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  line('concurrent commissions', Number(values.count));
  line('first answers by status', r.statuses);
  line('first answers by code', r.codes);
  line('seconds until the last answer', r.seconds);
  line('sites stored', r.stored);
  line('lost connections (no answer)', r.lost.length);
  line('answered 200, not stored (0)', r.okNotStored.length);
  line('refused, stored anyway (0)', r.refusedButStored.length);
  line('retries with the same key', r.retryStatuses);
  line('200s not replayed as they were (0)', r.replayMismatches.length);
  line('retries answered 409 (0)', r.retryConflicts.length);
  line('sites stored after the retries', r.storedAfterRetries);
  line('seconds of retries', r.retrySeconds);
  line('command', `node bench/commissionStorm.ts ${process.argv.slice(2).join(' ')}`.trim());
  const ok = r.okNotStored.length === 0 && r.refusedButStored.length === 0 && r.replayMismatches.length === 0 && r.retryConflicts.length === 0 && r.storedAfterRetries === Number(values.count);
  process.exitCode = ok ? 0 : 1;
} finally {
  await cleanup.runAll();
}
