import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
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

describe('the process log with a reader that stops reading', () => {
  const logging = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  // 20,000 lines of ~100 bytes over 100 turns, to a reader that takes none of them; then, once
  // the reader reads again and everything held has gone out, a last line.
  const script = `
    import { createLogger, droppedLogLines, heldLogBytes } from ${JSON.stringify(logging)};
    const log = createLogger({ name: 'stall', bufferMaxBytes: 65536 });
    const started = Date.now();
    for (let turn = 0; turn < 100; turn++) {
      for (let i = 0; i < 200; i++) log.info({ seq: turn * 200 + i }, 'a line of about a hundred bytes');
      await new Promise((r) => setImmediate(r));
    }
    process.stderr.write(JSON.stringify({ dropped: droppedLogLines(), held: heldLogBytes(), ms: Date.now() - started }) + '\\n');
    while (heldLogBytes() > 0) await new Promise((r) => setTimeout(r, 5));
    log.info('the last line');
  `;

  const run = async (stdout: 'pipe' | number, readFrom: (child: ChildProcess) => Readable) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', stdout, 'pipe'] });
    const report = await new Promise<{ dropped: number; held: number; ms: number }>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (err.includes('\n')) resolve(JSON.parse(err) as { dropped: number; held: number; ms: number });
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before writing everything: ${err}`)));
    });
    let out = '';
    const reading = readFrom(child);
    reading.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise((r) => child.once('exit', r));
    await new Promise((r) => setImmediate(r));
    return { report, code, lines: out.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; seq?: number; dropped_lines?: number; level: string }) };
  };

  const expectWholeInOrder = ({ report, code, lines }: Awaited<ReturnType<typeof run>>) => {
    expect(code).toBe(0);
    // Nothing waited for the reader: the process logged everything while nobody read.
    expect(report.dropped).toBeGreaterThan(0);
    expect(report.held).toBeLessThanOrEqual(65536 + 200);
    const seqs = lines.filter((l) => l.seq !== undefined).map((l) => l.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs.length + report.dropped).toBe(20_000);
    const warnings = lines.filter((l) => l.dropped_lines !== undefined);
    expect(warnings).toEqual([expect.objectContaining({ level: 'warn', dropped_lines: report.dropped })]);
    // The warning stands where the lines are missing, and the last line comes after it.
    const at = lines.indexOf(warnings[0]!);
    expect(lines[at + 1]?.seq ?? 20_000).toBeGreaterThan(lines[at - 1]!.seq! + 1);
    expect(lines.at(-1)!.msg).toBe('the last line');
  };

  it('to a socket (what a Node parent\'s pipe is): holds up to the bound, drops and counts the rest, warns once read again', async () => {
    expectWholeInOrder(await run('pipe', (child) => child.stdout!));
  });

  it('to a pipe (a FIFO, as from a shell\'s |): the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'efs-log-fifo-'));
    try {
      const fifo = join(dir, 'log');
      execFileSync('mkfifo', [fifo]);
      const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      const writeEnd = openSync(fifo, constants.O_WRONLY);
      try {
        expectWholeInOrder(await run(writeEnd, () => new Socket({ fd: readEnd, readable: true, writable: false })));
      } finally {
        closeSync(writeEnd);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
