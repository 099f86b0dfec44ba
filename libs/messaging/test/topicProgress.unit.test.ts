import { describe, expect, it } from 'vitest';
import { FreshLookup, TopicProgress } from '../src/topicProgress.ts';

describe('TopicProgress', () => {
  it('is caught up once every partition holding messages is handled up to its end; an empty partition needs nothing', async () => {
    const p = new TopicProgress();
    const ends = [{ partition: 0, low: 0, high: 2 }, { partition: 1, low: 5, high: 5 }];
    expect(p.reached(ends)).toBeUndefined();
    const waiting = p.waitFor(ends, 60_000);
    p.handled(0, 0);
    expect(p.reached(ends)).toBeUndefined();
    p.handled(0, 1);
    expect(await waiting).toBe(true);
    // A message handled again (a rejoin reads the topic again) does not move it back.
    p.handled(0, 0);
    expect(p.reached(ends)).toBe(true);
  });

  it('is never caught up again on a partition with a message it could not handle', async () => {
    const p = new TopicProgress();
    const waiting = p.waitFor([{ partition: 0, low: 0, high: 3 }], 60_000);
    p.failed(0);
    expect(await waiting).toBe(false);
    p.handled(0, 2);
    expect(p.reached([{ partition: 0, low: 0, high: 3 }])).toBe(false);
  });
});

describe('FreshLookup', () => {
  it('answers each caller with a lookup started after it asked, one at a time, shared by those asking meanwhile', async () => {
    const started: (() => void)[] = [];
    let runs = 0;
    const lookup = new FreshLookup(async () => {
      const n = ++runs;
      await new Promise<void>((r) => started.push(r));
      return n;
    });
    const first = lookup.next();
    // Asked while the first runs: they share the second, which starts once the first ends.
    const second = lookup.next();
    const third = lookup.next();
    expect(runs).toBe(1);
    started[0]!();
    expect(await first).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(2);
    started[1]!();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
  });

  it('starts the next lookup after a failed one, and passes the failure to its own callers only', async () => {
    let runs = 0;
    const lookup = new FreshLookup(async () => {
      if (++runs === 1) throw new Error('broker away');
      return runs;
    });
    const first = lookup.next();
    const second = lookup.next();
    await expect(first).rejects.toThrow('broker away');
    expect(await second).toBe(2);
  });
});
