/**
 * Issue 15, "an answer that says what happened": 1,000 concurrent commissions through the real
 * gateway (whole system, real Postgres). Every answer other than 200 left nothing stored, every
 * 200 was stored, and a retry of every request with its Idempotency-Key answers what the first
 * did (a 200 replayed as it was; a refusal retried until it is answered, never 409 from a
 * second execution). bench/commissionStorm.ts is the same storm against the main command in a
 * process of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_TOKEN, tierAvailable } from '@efs/testing';
import { runStorm } from '../bench/stormDriver.ts';
import { startTestSystem, type TestSystem } from './harness/system.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('a storm of 1,000 concurrent commissions', () => {
  let t: TestSystem;
  beforeAll(async () => {
    // The sandbox token's limit (1,200 a minute) is not what is under test here.
    t = await startTestSystem({ RATE_LIMIT_CLIENT: '1000000', VALIDATE_REPLIES: 'false' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('every non-200 left nothing stored, and every retry with the same key answers what the first did', { timeout: 600_000 }, async () => {
    const r = await runStorm({ url: t.urls.public, clientToken: SANDBOX_CLIENT_TOKEN, count: 1000 });
    console.log(`commission storm: ${JSON.stringify({ ...r, okNotStored: r.okNotStored.length, refusedButStored: r.refusedButStored.length, replayMismatches: r.replayMismatches.length, retryConflicts: r.retryConflicts.slice(0, 3), lost: r.lost.slice(0, 3) })}`);
    // Only answers that say what happened: done (200), or shed / not done in time (503). A
    // connection the client lost under the load (status 0) is no answer; its retry tells.
    expect(Object.keys(r.statuses).every((s) => s === '200' || s === '503' || s === '0'), JSON.stringify(r.codes)).toBe(true);
    expect(r.okNotStored).toEqual([]);
    expect(r.refusedButStored).toEqual([]);
    expect(r.stored - (r.statuses['200'] ?? 0)).toBeLessThanOrEqual(r.lost.length);
    expect(r.retryConflicts).toEqual([]);
    expect(r.replayMismatches).toEqual([]);
    expect(r.retryStatuses).toEqual({ 200: 1000 });
    expect(r.storedAfterRetries).toBe(1000);
  });
});
