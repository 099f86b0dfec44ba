import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TurnBatchedDestination } from '../src/index.ts';

/** A synchronous stream that records each write it is given. */
function recordingStream() {
  const writes: string[] = [];
  let flushes = 0;
  return { writes, flushes: () => flushes, stream: { write: (s: string) => void writes.push(s), flushSync: () => void flushes++ } };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

describe('TurnBatchedDestination: the process log, a write per turn of the event loop', () => {
  it('writes the lines of one turn together, in order, at the end of the turn', async () => {
    const r = recordingStream();
    const d = new TurnBatchedDestination(r.stream);
    d.write('a\n');
    d.write('b\n');
    d.write('c\n');
    expect(r.writes).toEqual([]);
    await nextTurn();
    expect(r.writes).toEqual(['a\nb\nc\n']);
    d.write('d\n');
    await nextTurn();
    expect(r.writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('writes what is pending at once on flushSync, and again nothing twice', async () => {
    const r = recordingStream();
    const d = new TurnBatchedDestination(r.stream);
    d.write('x\n');
    d.flushSync();
    expect(r.writes).toEqual(['x\n']);
    expect(r.flushes()).toBe(1);
    await nextTurn();
    expect(r.writes).toEqual(['x\n']);
  });

  it('a line logged right before process.exit reaches stdout (the exit handler writes what the turn held)', () => {
    const logging = fileURLToPath(new URL('../src/index.ts', import.meta.url));
    const script = `import { createLogger } from ${JSON.stringify(logging)}; const l = createLogger({ name: 'exit-test' }); l.info('first'); l.info('last words'); process.exit(3);`;
    let out = '';
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    } catch (err) {
      const e = err as { status: number; stdout: string };
      expect(e.status).toBe(3);
      out = e.stdout;
    }
    expect(out.trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['first', 'last words']);
  });
});
