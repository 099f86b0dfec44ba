import { describe, expect, it, vi } from 'vitest';
import { droppedLogLines, heldLogBytes, NonBlockingWriter } from '../src/index.ts';

/** A reader with room for `room` more bytes: a write takes what fits, or fails with EAGAIN when none does. */
function reader(room: number) {
  const taken: Buffer[] = [];
  let writes = 0;
  const r = {
    room,
    writes: () => writes,
    text: () => Buffer.concat(taken).toString('utf8'),
    write(data: string | Uint8Array): number {
      writes++;
      const bytes = Buffer.from(data);
      if (r.room === 0) throw Object.assign(new Error('EAGAIN: resource temporarily unavailable, write'), { code: 'EAGAIN' });
      const n = Math.min(r.room, bytes.length);
      taken.push(bytes.subarray(0, n));
      r.room -= n;
      return n;
    },
  };
  return r;
}

const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `line ${from + i}\n`).join('');
const warning = (n: number) => `dropped ${n}\n`;
const writer = (r: ReturnType<typeof reader>, maxHeldBytes: number) => new NonBlockingWriter({ write: (d) => r.write(d), maxHeldBytes, retryMs: 1, droppedLine: warning });

describe('NonBlockingWriter: log output that never waits for its reader', () => {
  it('writes each chunk at once, one write each, while the reader keeps up', () => {
    const r = reader(Infinity);
    const w = writer(r, 100);
    w.write(lines(0, 3));
    w.write('é and ü\n');
    expect(r.text()).toBe(`${lines(0, 3)}é and ü\n`);
    expect(r.writes()).toBe(2);
  });

  it('holds what the reader cannot take (EAGAIN, or part of a chunk), in order, and writes it once the reader is back', async () => {
    const r = reader(10);
    const w = writer(r, 1000);
    const before = heldLogBytes();
    w.write(lines(0, 5));
    w.write(lines(5, 10));
    expect(r.text()).toBe(lines(0, 5).slice(0, 10));
    expect(heldLogBytes() - before).toBe(lines(0, 10).length - 10);
    // Nothing is attempted while the reader is full but on the timer.
    const writes = r.writes();
    w.write(lines(10, 12));
    expect(r.writes()).toBe(writes);
    r.room = Infinity;
    await vi.waitFor(() => expect(r.text()).toBe(lines(0, 12)));
    expect(heldLogBytes()).toBe(before);
  });

  it('keeps a multi-byte character whole across a partial write', async () => {
    const r = reader(3);
    const w = writer(r, 1000);
    w.write('aéé\n');
    r.room = Infinity;
    await vi.waitFor(() => expect(r.text()).toBe('aéé\n'));
  });

  it('drops what does not fit, and everything after it until what is held has gone out; then says how many', async () => {
    const r = reader(0);
    const w = writer(r, 40);
    const before = droppedLogLines();
    w.write(lines(0, 3)); // 21 bytes: held
    w.write(lines(3, 5)); // 14 more, 35: held
    w.write(lines(5, 6)); // 42 past the bound: dropped
    w.write('x\n'); // would fit, but the gap goes on until what is held is out
    expect(droppedLogLines() - before).toBe(2);
    r.room = 10; // the reader takes part of what is held: the gap goes on
    await vi.waitFor(() => expect(r.room).toBe(0));
    w.write(lines(6, 9));
    expect(droppedLogLines() - before).toBe(5);
    r.room = Infinity;
    await vi.waitFor(() => expect(r.text()).toBe(`${lines(0, 5)}${warning(5)}`));
    w.write(lines(9, 10));
    expect(r.text()).toBe(`${lines(0, 5)}${warning(5)}${lines(9, 10)}`);
  });

  it('drops a chunk larger than the bound whole when none of it went out, and keeps the rest of a line that began to go out', async () => {
    const r = reader(0);
    const w = writer(r, 8);
    const before = droppedLogLines();
    w.write(lines(0, 2));
    expect(droppedLogLines() - before).toBe(2);
    r.room = Infinity;
    await vi.waitFor(() => expect(r.text()).toBe(warning(2)));

    const r2 = reader(3);
    const w2 = writer(r2, 8);
    w2.write(lines(0, 4)); // 3 bytes of "line 0" went out: its rest is kept, lines 1-3 are dropped
    expect(droppedLogLines() - before).toBe(5);
    r2.room = Infinity;
    await vi.waitFor(() => expect(r2.text()).toBe(`${lines(0, 1)}${warning(3)}`));
  });

  it('counts the lines of a write that fails for good (the reader closed its end) and never throws', () => {
    const before = droppedLogLines();
    const w = new NonBlockingWriter({
      write: () => {
        throw Object.assign(new Error('EPIPE: broken pipe, write'), { code: 'EPIPE' });
      },
      maxHeldBytes: 100,
    });
    w.write(lines(0, 3));
    w.write(lines(3, 4));
    expect(droppedLogLines() - before).toBe(4);
    expect(heldLogBytes()).toBe(0);
  });

  it('at exit, waits a bounded time for the reader to take what is held, then counts what it did not', () => {
    const r = reader(0);
    let attempts = 0;
    const back = new NonBlockingWriter({
      write: (d) => (++attempts >= 3 ? ((r.room = Infinity), r.write(d)) : r.write(d)),
      maxHeldBytes: 1000,
      retryMs: 1,
    });
    back.write(lines(2, 3));
    back.flushSync(1000);
    expect(r.text()).toBe(lines(2, 3));

    const r2 = reader(0);
    const stuck = writer(r2, 1000);
    const before = droppedLogLines();
    stuck.write(lines(0, 4));
    const t0 = Date.now();
    stuck.flushSync(30);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(droppedLogLines() - before).toBe(4);
    expect(heldLogBytes()).toBe(0);
  });
});
