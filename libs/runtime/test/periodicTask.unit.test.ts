import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@efs/logging';
import { PeriodicTask, STILL_DUE_RETRY_MS, untilDue, type NextDueMs } from '../src/periodicTask.ts';

const logger = createLogger({ name: 'periodic-task-test', level: 'silent' });

/** A task whose runs are recorded (ms since the test began) and answer what `plan` says. */
function recordingTask(opts: { pollMs: number; minGapMs?: number; plan?: (run: number) => NextDueMs; fail?: (run: number) => boolean }) {
  const t0 = Date.now();
  const runs: number[] = [];
  const task = new PeriodicTask({
    pollMs: opts.pollMs,
    ...(opts.minGapMs === undefined ? {} : { minGapMs: opts.minGapMs }),
    logger,
    what: 'test run',
    run: () => {
      runs.push(Date.now() - t0);
      const n = runs.length;
      if (opts.fail?.(n)) return Promise.reject(new Error('boom'));
      return Promise.resolve(opts.plan?.(n));
    },
  });
  return { task, runs };
}

describe('PeriodicTask', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at start, then every pollMs when no run knows of anything due', async () => {
    const { task, runs } = recordingTask({ pollMs: 2000 });
    task.start();
    await vi.advanceTimersByTimeAsync(6500);
    expect(runs).toEqual([0, 2000, 4000, 6000]);
    await task.stop();
  });

  it('runs first in the time start is given, then every pollMs', async () => {
    const { task, runs } = recordingTask({ pollMs: 2000 });
    task.start(2000);
    await vi.advanceTimersByTimeAsync(6500);
    expect(runs).toEqual([2000, 4000, 6000]);
    await task.stop();
  });

  it('sleeps until the next due time a run answers, never longer than pollMs', async () => {
    const plans: NextDueMs[] = [300, 5000, undefined];
    const { task, runs } = recordingTask({ pollMs: 2000, plan: (n) => plans[n - 1] });
    task.start();
    await vi.advanceTimersByTimeAsync(4400);
    expect(runs).toEqual([0, 300, 2300, 4300]);
    await task.stop();
  });

  it('runs at once when woken, and a burst of wakes gives one run, minGapMs after the last', async () => {
    const { task, runs } = recordingTask({ pollMs: 10_000, minGapMs: 100 });
    task.start();
    await vi.advanceTimersByTimeAsync(1000);
    task.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([0, 1000]);
    // A burst of wakes right after a run: one run, minGapMs after the last.
    task.wake();
    task.wake();
    task.wake();
    await vi.advanceTimersByTimeAsync(99);
    expect(runs).toEqual([0, 1000]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([0, 1000, 1100]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(runs).toEqual([0, 1000, 1100, 11_100, 21_100]);
    await task.stop();
  });

  it('a due time that passed answers a run minGapMs after the last, not a loop', async () => {
    const { task, runs } = recordingTask({ pollMs: 10_000, minGapMs: 100, plan: () => -5 });
    task.start();
    await vi.advanceTimersByTimeAsync(350);
    expect(runs).toEqual([0, 100, 200, 300]);
    await task.stop();
  });

  it('a wake during a slow run gives one more run as soon as it ends (and the gap allows), however many wakes', async () => {
    const t0 = Date.now();
    const runs: [number, number][] = [];
    const task = new PeriodicTask({
      pollMs: 10_000,
      minGapMs: 100,
      logger,
      what: 'slow run',
      run: async () => {
        const start = Date.now() - t0;
        await new Promise((r) => setTimeout(r, 60));
        runs.push([start, Date.now() - t0]);
      },
    });
    task.start();
    await vi.advanceTimersByTimeAsync(20);
    task.wake();
    task.wake();
    await vi.advanceTimersByTimeAsync(200);
    expect(runs).toEqual([
      [0, 60],
      [100, 160],
    ]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toHaveLength(2);
    await task.stop();
  });

  it('stop() waits for the run in progress, and nothing runs after it', async () => {
    let finished = 0;
    let started = 0;
    const task = new PeriodicTask({
      pollMs: 50,
      minGapMs: 10,
      logger,
      what: 'slow run',
      run: async () => {
        started++;
        await new Promise((r) => setTimeout(r, 30));
        finished++;
        return 0;
      },
    });
    task.start();
    await vi.advanceTimersByTimeAsync(10);
    expect([started, finished]).toEqual([1, 0]);
    const stopping = task.stop();
    task.wake();
    await vi.advanceTimersByTimeAsync(30);
    await stopping;
    expect([started, finished]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(started).toBe(1);
  });

  it('logs a failed run and tries again at the next poll; stops for good', async () => {
    const { task, runs } = recordingTask({ pollMs: 500, fail: (n) => n === 1 });
    task.start();
    await vi.advanceTimersByTimeAsync(1200);
    expect(runs).toEqual([0, 500, 1000]);
    await task.stop();
    task.wake();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toEqual([0, 500, 1000]);
  });
});

describe('untilDue', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 27) + ms);
  it('answers the time until the next due work, nothing when none is known, and a retry for work that was due when the run started', () => {
    expect(untilDue(null, at(0), at(10))).toBeUndefined();
    expect(untilDue(at(500), at(0), at(10))).toBe(490);
    // Became due during the run: at once (the task's minimum gap still applies).
    expect(untilDue(at(5), at(0), at(10))).toBe(-5);
    // Due before the run started and still there: held elsewhere or failing.
    expect(untilDue(at(0), at(0), at(10))).toBe(STILL_DUE_RETRY_MS);
    expect(untilDue(at(-60_000), at(0), at(10))).toBe(STILL_DUE_RETRY_MS);
  });
});
