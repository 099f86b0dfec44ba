import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { GroupCommit, takeBatch, type ItemOutcome } from '../src/groupCommit.ts';

/** A promise and its resolver, to hold a write in flight. */
function held(): { promise: Promise<void>; release(): void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

/** Lets a finished write's loop wind down, so that the next submit finds nothing in flight. */
const idle = () => new Promise((r) => setImmediate(r));

const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error: (error as Error).message }));

/** A store of unique ids written by a GroupCommit: writeAll fails as a whole on any taken id (as a unique key does). */
function uniqueStore(opts: { maxItems?: number; maxWeight?: number } = {}) {
  const stored = new Set<string>();
  const writes: string[][] = [];
  let gate: Promise<void> = Promise.resolve();
  const take = (id: string) => {
    if (stored.has(id)) throw new Error(`${id} taken`);
    stored.add(id);
    return `stored ${id}`;
  };
  const commits = new GroupCommit<string, string>({
    writeOne: async (id) => {
      await gate;
      writes.push([id]);
      return take(id);
    },
    writeAll: async (ids) => {
      await gate;
      writes.push([...ids]);
      if (ids.some((id, i) => stored.has(id) || ids.indexOf(id) !== i)) throw new Error('unique violation');
      return ids.map((id): ItemOutcome<string> => ({ ok: true, value: take(id) }));
    },
    retryAlone: (err) => (err as Error).message === 'unique violation',
    maxItems: opts.maxItems ?? 10,
    ...(opts.maxWeight === undefined ? {} : { maxWeight: opts.maxWeight, weightOf: (id: string) => Number(id.split(':')[1] ?? 1) }),
  });
  return { commits, stored, writes, hold: (h: Promise<void>) => (gate = h) };
}

/**
 * A GroupCommit whose first write (alone) waits for `first.release()`, so that what is submitted
 * meanwhile goes to `writeAll` together; every write's items are recorded in `writes`.
 */
function behindAHeldWrite(writeAll: (ids: readonly string[]) => Promise<readonly ItemOutcome<string>[]>, retryAlone: (err: unknown) => boolean) {
  const writes: string[][] = [];
  const first = held();
  const commits = new GroupCommit<string, string>({
    writeOne: async (id) => {
      await first.promise;
      writes.push([id]);
      return id;
    },
    writeAll: async (ids) => {
      writes.push([...ids]);
      return writeAll(ids);
    },
    retryAlone,
    maxItems: 10,
  });
  return { commits, writes, first };
}

describe('takeBatch', () => {
  it('takes from the front, in order, up to maxItems', () => {
    const waiting = [1, 2, 3, 4, 5];
    expect(takeBatch(waiting, 2)).toEqual([1, 2]);
    expect(waiting).toEqual([3, 4, 5]);
    expect(takeBatch(waiting, 10)).toEqual([3, 4, 5]);
    expect(waiting).toEqual([]);
    expect(takeBatch(waiting, 10)).toEqual([]);
  });

  it('stops before the item that would pass maxWeight, yet always takes one item', () => {
    const waiting = [3, 4, 2, 9, 1];
    expect(takeBatch(waiting, 10, (w) => w, 9)).toEqual([3, 4, 2]);
    expect(takeBatch(waiting, 10, (w) => w, 5)).toEqual([9]);
    expect(takeBatch(waiting, 10, (w) => w, 5)).toEqual([1]);
  });
});

describe('GroupCommit', () => {
  it('writes the first item at once and alone; what arrives meanwhile goes in the next write, together, up to maxItems', async () => {
    const s = uniqueStore({ maxItems: 3 });
    const first = held();
    s.hold(first.promise);
    const answers = [s.commits.submit('a')];
    // 'a' is in flight (its write started synchronously, no timer); these wait for it.
    for (const id of ['b', 'c', 'd', 'e']) answers.push(s.commits.submit(id));
    s.hold(Promise.resolve());
    first.release();
    expect(await Promise.all(answers)).toEqual(['stored a', 'stored b', 'stored c', 'stored d', 'stored e']);
    expect(s.writes).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
  });

  it('keeps batches under maxWeight', async () => {
    const s = uniqueStore({ maxWeight: 5 });
    const first = held();
    s.hold(first.promise);
    const answers = ['a:1', 'b:2', 'c:3', 'd:1', 'e:9'].map((id) => s.commits.submit(id));
    s.hold(Promise.resolve());
    first.release();
    await Promise.all(answers);
    expect(s.writes).toEqual([['a:1'], ['b:2', 'c:3'], ['d:1'], ['e:9']]);
  });

  it('a batch that fails as a whole is written again item by item in order: only the conflicting items fail, each with its own answer', async () => {
    const s = uniqueStore();
    await s.commits.submit('taken');
    await idle();
    const first = held();
    s.hold(first.promise);
    const answers = ['x', 'y', 'taken', 'z', 'y', 'w'].map((id) => settle(s.commits.submit(id)));
    s.hold(Promise.resolve());
    first.release();
    expect(await Promise.all(answers)).toEqual([
      { ok: true, value: 'stored x' },
      { ok: true, value: 'stored y' },
      { ok: false, error: 'taken taken' },
      { ok: true, value: 'stored z' },
      // The second 'y' of the batch: the first one (submitted before it) has it, as if each had been alone.
      { ok: false, error: 'y taken' },
      { ok: true, value: 'stored w' },
    ]);
    expect(s.writes).toEqual([['taken'], ['x'], ['y', 'taken', 'z', 'y', 'w'], ['y'], ['taken'], ['z'], ['y'], ['w']]);
    expect([...s.stored].sort()).toEqual(['taken', 'w', 'x', 'y', 'z']);
  });

  it('answers each item what writeAll answered for it (an item may fail while the rest are stored)', async () => {
    const { commits, writes, first } = behindAHeldWrite(
      async (ids) => ids.map((id): ItemOutcome<string> => (id === 'late' ? { ok: false, error: new Error('past its deadline') } : { ok: true, value: id.toUpperCase() })),
      () => true,
    );
    const answers = ['a', 'b', 'late', 'c'].map((id) => settle(commits.submit(id)));
    first.release();
    expect(await Promise.all(answers)).toEqual([
      { ok: true, value: 'a' },
      { ok: true, value: 'B' },
      { ok: false, error: 'past its deadline' },
      { ok: true, value: 'C' },
    ]);
    expect(writes).toEqual([['a'], ['b', 'late', 'c']]);
  });

  it('writes an item alone in the async context of its submitter, also when it waited behind another write', async () => {
    const request = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    let fail = true;
    const first = held();
    const commits = new GroupCommit<string, void>({
      writeOne: async (id) => {
        if (id === 'a') await first.promise;
        seen.push(`${id} in ${request.getStore()}`);
      },
      writeAll: async () => {
        if (fail) throw new Error('conflict');
        return [];
      },
      retryAlone: () => true,
      maxItems: 10,
    });
    const answers = ['a', 'b', 'c'].map((id) => request.run(`request ${id}`, () => commits.submit(id)));
    first.release();
    await Promise.all(answers);
    expect(seen).toEqual(['a in request a', 'b in request b', 'c in request c']);
    // A writeAll answering too few outcomes is a bug: the items it left out fail, none is written twice.
    fail = false;
    await idle();
    const more = [request.run('r', () => commits.submit('a')), ...['d', 'e'].map((id) => settle(commits.submit(id)))];
    const [, d, e] = await Promise.all(more);
    expect([d, e]).toEqual([
      { ok: false, error: 'writeAll answered 0 outcomes for 2 items' },
      { ok: false, error: 'writeAll answered 0 outcomes for 2 items' },
    ]);
  });

  it('answers every item of a batch that failed whole for another reason than a conflict with that error, writing none of them again', async () => {
    const { commits, writes, first } = behindAHeldWrite(
      async () => {
        throw new Error('connection lost');
      },
      (err) => (err as Error).message === 'unique violation',
    );
    const answers = ['a', 'b', 'c'].map((id) => settle(commits.submit(id)));
    first.release();
    expect(await Promise.all(answers)).toEqual([
      { ok: true, value: 'a' },
      { ok: false, error: 'connection lost' },
      { ok: false, error: 'connection lost' },
    ]);
    expect(writes).toEqual([['a'], ['b', 'c']]);
  });

  it('answers an item still waiting at its deadline then, behind a write that hangs, and never writes it', async () => {
    const writes: string[][] = [];
    const hung = held();
    const commits = new GroupCommit<{ id: string; deadline?: number }, string>({
      writeOne: async (x) => {
        if (x.id === 'hangs') await hung.promise;
        writes.push([x.id]);
        return x.id;
      },
      writeAll: async (xs) => {
        writes.push(xs.map((x) => x.id));
        return xs.map((x): ItemOutcome<string> => ({ ok: true, value: x.id }));
      },
      retryAlone: () => true,
      maxItems: 10,
      deadlineOf: (x) => x.deadline,
      expired: (x) => new Error(`${x.id}: 503`),
    });
    const first = settle(commits.submit({ id: 'hangs' }));
    const soon = settle(commits.submit({ id: 'soon', deadline: Date.now() + 30 }));
    const later = settle(commits.submit({ id: 'later', deadline: Date.now() + 60_000 }));
    const none = settle(commits.submit({ id: 'none' }));
    expect(await soon).toEqual({ ok: false, error: 'soon: 503' });
    hung.release();
    expect(await Promise.all([first, later, none])).toEqual([
      { ok: true, value: 'hangs' },
      { ok: true, value: 'later' },
      { ok: true, value: 'none' },
    ]);
    expect(writes).toEqual([['hangs'], ['later', 'none']]);
  });
});

/**
 * A GroupCommit of hand-ins (lists of items written together, as telemetry-ingest's partition
 * batches): one write of the concatenated items per batch, at most `maxItems` items per write,
 * `writers` writes at a time, a turn of the event loop for the rest of a burst to join.
 */
function handIns(write: (items: readonly number[]) => Promise<void>, opts: { maxItems: number; writers: number; retryAlone?: (err: unknown) => boolean }) {
  return new GroupCommit<readonly number[], void>({
    writeAll: async (hands) => {
      await write(hands.flat());
      return hands.map((): ItemOutcome<void> => ({ ok: true, value: undefined }));
    },
    writeOne: (hand) => write(hand),
    retryAlone: opts.retryAlone ?? (() => true),
    maxItems: Number.POSITIVE_INFINITY,
    maxWeight: opts.maxItems,
    weightOf: (hand) => hand.length,
    writers: opts.writers,
    joinSameTurn: true,
  });
}

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

describe('GroupCommit of hand-ins, several writers, joining the same turn', () => {
  it('writes what is handed in at the same time in one transaction, and settles each hand-in after it', async () => {
    const r = recorder();
    const groups = handIns(r.write, { maxItems: 100, writers: 2 });
    const handed = [[1, 2], [3], [4, 5, 6]].map((items) => groups.submit(items).then(() => r.writes.length));
    // Each hand-in settles only once the transaction holding it was written.
    expect(await Promise.all(handed)).toEqual([1, 1, 1]);
    expect(r.writes).toEqual([[1, 2, 3, 4, 5, 6]]);
  });

  it('cuts groups at maxItems (whole hand-ins), writes a larger hand-in alone, and at most `writers` at a time', async () => {
    const r = recorder({ holdMs: 5 });
    const groups = handIns(r.write, { maxItems: 4, writers: 2 });
    await Promise.all([[1, 2], [3, 4], [5, 6, 7, 8, 9, 10], [11], [12, 13], [14], [15]].map((items) => groups.submit(items)));
    expect(r.writes.map((w) => w.join(',')).sort()).toEqual(['1,2,3,4', '11,12,13,14', '15', '5,6,7,8,9,10'].sort());
    expect(r.most()).toBe(2);
  });

  it('writes a failed group again hand-in by hand-in: only the one that cannot be written fails', async () => {
    const r = recorder({ bad: 4 });
    const groups = handIns(r.write, { maxItems: 100, writers: 1 });
    const outcomes = await Promise.allSettled([[1, 2], [3, 4], [5]].map((items) => groups.submit(items)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('cannot write 4');
    expect(r.writes).toEqual([[1, 2], [5]]);
  });

  it('fails every hand-in of a group at once when the failure is not one of its data (the database unreachable): no write one by one', async () => {
    let calls = 0;
    const unreachable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const groups = handIns(
      async () => {
        calls++;
        throw unreachable;
      },
      { maxItems: 100, writers: 1, retryAlone: (err) => (err as { code?: string }).code !== 'ECONNREFUSED' },
    );
    const outcomes = await Promise.allSettled([[1, 2], [3, 4], [5]].map((items) => groups.submit(items)));
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok'))).toEqual(['connect ECONNREFUSED', 'connect ECONNREFUSED', 'connect ECONNREFUSED']);
    expect(calls).toBe(1);
  });

  it('keeps writing what is handed in while a transaction runs, together in the next one', async () => {
    const r = recorder({ holdMs: 20 });
    const groups = handIns(r.write, { maxItems: 100, writers: 1 });
    const first = groups.submit([1]);
    await new Promise((res) => setTimeout(res, 5));
    await Promise.all([first, groups.submit([2]), groups.submit([3])]);
    expect(r.writes).toEqual([[1], [2, 3]]);
  });
});
