import { describe, expect, it } from 'vitest';
import { KeyedRunner } from '../src/keyedRunner.ts';

const never = (err: unknown) => {
  throw err;
};

describe('KeyedRunner', () => {
  it('admits in arrival order when full: a place freed goes to the first waiter, never to a caller arriving meanwhile', async () => {
    const runner = new KeyedRunner({ limit: 1, onError: never });
    const order: string[] = [];
    let free!: () => void;
    await runner.admit('a', () => new Promise<void>((r) => (free = r)));
    const waiter = runner.admit('b', async () => void order.push('b1'));
    free();
    // Fresh callers at every turn of the microtask queue while the place changes hands.
    const late: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      await Promise.resolve();
      late.push(runner.admit('b', async () => void order.push(`b${i + 2}`)));
    }
    await (await waiter)!.done;
    await Promise.all(late.map(async (p) => (await (p as ReturnType<KeyedRunner['admit']>))!.done));
    expect(order).toEqual(Array.from({ length: 11 }, (_, i) => `b${i + 1}`));
    expect(runner.size).toBe(0);
  });

  it('runs tasks of one key one after the other, and a task without a key behind none of them', async () => {
    const runner = new KeyedRunner({ onError: never });
    const order: string[] = [];
    let free!: () => void;
    const first = (await runner.admit('a', () => new Promise<void>((r) => (free = r)).then(() => void order.push('a1'))))!;
    const second = (await runner.admit('a', async () => void order.push('a2')))!;
    const keyless = (await runner.admit(undefined, async () => void order.push('no key')))!;
    const another = (await runner.admit(undefined, async () => void order.push('no key either')))!;
    await keyless.done;
    await another.done;
    expect(order).toEqual(['no key', 'no key either']);
    free();
    await Promise.all([first.done, second.done]);
    expect(order).toEqual(['no key', 'no key either', 'a1', 'a2']);
    expect(runner.size).toBe(0);
  });

  it('lets a waiter decline the place it waited for; the place goes to the next waiter', async () => {
    const runner = new KeyedRunner({ limit: 1, onError: never });
    const ran: string[] = [];
    let free!: () => void;
    await runner.admit('a', () => new Promise<void>((r) => (free = r)));
    const declined = runner.admit('b', async () => void ran.push('b'), () => false);
    const next = runner.admit('c', async () => void ran.push('c'));
    free();
    expect(await declined).toBeUndefined();
    await (await next)!.done;
    expect(ran).toEqual(['c']);
    expect(runner.size).toBe(0);
  });

  it('never has more than its limit admitted, and runs one key in order while other keys overlap', async () => {
    const runner = new KeyedRunner({ limit: 3, onError: never });
    let running = 0;
    let most = 0;
    const perKey = new Map<string, number[]>();
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      const key = `k${i % 4}`;
      const admitted = await runner.admit(key, async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 1));
        perKey.set(key, [...(perKey.get(key) ?? []), i]);
        running--;
      });
      all.push(admitted!.done);
      expect(runner.size).toBeLessThanOrEqual(3);
    }
    await Promise.all(all);
    await runner.idle();
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(3);
    for (const [key, seen] of perKey) expect(seen, key).toEqual([...seen].sort((a, b) => a - b));
  });
});
