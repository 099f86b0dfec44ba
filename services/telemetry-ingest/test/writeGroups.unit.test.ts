import { describe, expect, it } from 'vitest';
import { WriteGroups } from '../src/store/writeGroups.ts';

/** A write that records what each transaction held, how many ran at once, and fails on `bad`. */
function recorder(opts: { bad?: number; holdMs?: number } = {}) {
  const writes: number[][] = [];
  let running = 0;
  let most = 0;
  const write = async (items: readonly number[]) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, opts.holdMs ?? 1));
    running--;
    if (opts.bad !== undefined && items.includes(opts.bad)) throw new Error(`cannot write ${opts.bad}`);
    writes.push([...items]);
  };
  return { writes, write, most: () => most };
}

describe('WriteGroups', () => {
  it('writes what is handed in at the same time in one transaction, and settles each hand-in after it', async () => {
    const r = recorder();
    const groups = new WriteGroups<number>({ write: r.write, maxItems: 100, writers: 2 });
    const handed = [[1, 2], [3], [4, 5, 6]].map((items) => groups.add(items).then(() => r.writes.length));
    // Each hand-in settles only once the transaction holding it was written.
    expect(await Promise.all(handed)).toEqual([1, 1, 1]);
    expect(r.writes).toEqual([[1, 2, 3, 4, 5, 6]]);
  });

  it('cuts groups at maxItems (whole hand-ins), writes a larger hand-in alone, and at most `writers` at a time', async () => {
    const r = recorder({ holdMs: 5 });
    const groups = new WriteGroups<number>({ write: r.write, maxItems: 4, writers: 2 });
    await Promise.all([[1, 2], [3, 4], [5, 6, 7, 8, 9, 10], [11], [12, 13], [14], [15]].map((items) => groups.add(items)));
    expect(r.writes.map((w) => w.join(',')).sort()).toEqual(['1,2,3,4', '11,12,13,14', '15', '5,6,7,8,9,10'].sort());
    expect(r.most()).toBe(2);
  });

  it('writes a failed group again hand-in by hand-in: only the one that cannot be written fails', async () => {
    const r = recorder({ bad: 4 });
    const groups = new WriteGroups<number>({ write: r.write, maxItems: 100, writers: 1 });
    const outcomes = await Promise.allSettled([[1, 2], [3, 4], [5]].map((items) => groups.add(items)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('cannot write 4');
    expect(r.writes).toEqual([[1, 2], [5]]);
  });

  it('fails every hand-in of a group at once when the failure is not one of its data (the database unreachable): no write one by one', async () => {
    let calls = 0;
    const unreachable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const groups = new WriteGroups<number>({
      write: async () => {
        calls++;
        throw unreachable;
      },
      maxItems: 100,
      writers: 1,
      splits: (err) => (err as { code?: string }).code !== 'ECONNREFUSED',
    });
    const outcomes = await Promise.allSettled([[1, 2], [3, 4], [5]].map((items) => groups.add(items)));
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok'))).toEqual(['connect ECONNREFUSED', 'connect ECONNREFUSED', 'connect ECONNREFUSED']);
    expect(calls).toBe(1);
  });

  it('keeps writing what is handed in while a transaction runs, together in the next one', async () => {
    const r = recorder({ holdMs: 20 });
    const groups = new WriteGroups<number>({ write: r.write, maxItems: 100, writers: 1 });
    const first = groups.add([1]);
    await new Promise((res) => setTimeout(res, 5));
    await Promise.all([first, groups.add([2]), groups.add([3])]);
    expect(r.writes).toEqual([[1], [2, 3]]);
  });
});
