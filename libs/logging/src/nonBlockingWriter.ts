import { writeSync } from 'node:fs';
import { hostname } from 'node:os';

/** What the process's log writers have dropped and hold, for a metrics exporter. */
const totals = { droppedLines: 0, heldBytes: 0 };

/** Log lines dropped since the process started because whatever reads the log fell too far behind (or went away). */
export function droppedLogLines(): number {
  return totals.droppedLines;
}

/** Bytes of log lines written but not yet taken by whatever reads the log (at most the bound, plus one line under way). */
export function heldLogBytes(): number {
  return totals.heldBytes;
}

/** The default bound of what is held for a reader that is behind: 4 MiB. */
export const DEFAULT_LOG_BUFFER_MAX_BYTES = 4 * 1024 * 1024;

export interface NonBlockingWriterOptions {
  /**
   * Writes what the reader's side can take of `data` now and returns how many bytes that was;
   * throws EAGAIN when it takes nothing (a full pipe or socket). `fs.writeSync` on a
   * non-blocking descriptor.
   */
  write: (data: string | Uint8Array) => number;
  /** The most bytes held for a reader that is behind; lines past it are dropped and counted. */
  maxHeldBytes: number;
  /** Milliseconds between attempts while bytes are held. */
  retryMs?: number;
  /** The line written after lines were dropped, once the reader has taken everything held. */
  droppedLine?: (droppedLines: number) => string;
}

/** Writers holding bytes (or owing a gap's warning): the exit handler gives each a last chance to write them. */
const holding = new Set<NonBlockingWriter>();

/**
 * Writes log output to a descriptor without ever waiting for its reader. What the reader cannot
 * take now (EAGAIN or a partial write: a full pipe or socket) is held, in order, up to
 * `maxHeldBytes`, and written on a timer (`retryMs`) until it has all gone out; nothing spins or
 * sleeps meanwhile. A chunk that does not fit is dropped, and so is everything after it until
 * all that is held has gone out: the lines lost make one gap, counted (`droppedLogLines`), and
 * a warning line saying how many follows the gap. A line that has begun to go out is always
 * finished, so the output stays whole lines. Any other write error (the reader closed its end)
 * drops what is held and the chunk, counted, and never reaches the caller.
 */
export class NonBlockingWriter {
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  /** From the first chunk dropped for want of room until what was held before it has gone out. */
  private gap = false;
  private droppedInGap = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly writeOut: NonBlockingWriterOptions['write'];
  private readonly retryMs: number;
  private readonly droppedLine: (droppedLines: number) => string;
  maxHeldBytes: number;

  constructor(opts: NonBlockingWriterOptions) {
    this.writeOut = opts.write;
    this.maxHeldBytes = opts.maxHeldBytes;
    this.retryMs = opts.retryMs ?? 10;
    this.droppedLine = opts.droppedLine ?? droppedWarning;
  }

  /** Writes `chunk` (whole lines) now, or holds or drops it behind what is already held. */
  write(chunk: string): void {
    if (this.gap) return this.dropInGap(chunk);
    if (this.held.length > 0) {
      const bytes = Buffer.from(chunk);
      if (this.heldBytes + bytes.length > this.maxHeldBytes) return this.dropInGap(chunk);
      return this.hold(bytes);
    }
    const n = this.attempt(chunk);
    if (n < 0) return this.lost(chunk);
    if (n >= chunk.length && n === Buffer.byteLength(chunk)) return;
    const rest = Buffer.from(chunk).subarray(n);
    if (rest.length <= this.maxHeldBytes) return this.hold(rest);
    if (n === 0) return this.dropInGap(chunk);
    // Part of a line went out: the rest of it is kept, the lines after it are dropped.
    const newline = rest.indexOf(0x0a);
    const lineEnd = newline === -1 ? rest.length : newline + 1;
    this.hold(rest.subarray(0, lineEnd));
    this.dropInGap(rest.subarray(lineEnd));
  }

  /** Writes what is held, waiting up to `waitMs` for the reader: for the process's exit, when there is no later. */
  flushSync(waitMs = 2000): void {
    const deadline = Date.now() + waitMs;
    this.retry();
    while (this.timer && Date.now() < deadline) {
      Atomics.wait(exitPause, 0, 0, this.retryMs);
      this.retry();
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.lost(this.held.splice(0));
    this.setHeld(0);
    holding.delete(this);
  }

  /** Bytes written, or -1 when the reader has gone (any error but EAGAIN). */
  private attempt(data: string | Uint8Array): number {
    try {
      return this.writeOut(data);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EAGAIN' ? 0 : -1;
    }
  }

  private readonly retry = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.held.length > 0) {
      const head = this.held[0]!;
      const n = this.attempt(head);
      if (n < 0) {
        this.lost(this.held.splice(0));
        this.setHeld(0);
        break;
      }
      this.setHeld(this.heldBytes - n);
      if (n < head.length) {
        this.held[0] = head.subarray(n);
        return this.schedule();
      }
      this.held.shift();
    }
    holding.delete(this);
    if (this.gap) {
      const dropped = this.droppedInGap;
      this.gap = false;
      this.droppedInGap = 0;
      this.write(this.droppedLine(dropped));
    }
  };

  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.held.push(bytes);
    this.setHeld(this.heldBytes + bytes.length);
    this.schedule();
  }

  /** No room: the lines are dropped, and so is every line after them until what is held has gone out. */
  private dropInGap(data: string | Uint8Array): void {
    const lines = countLines(data);
    this.gap = true;
    this.droppedInGap += lines;
    totals.droppedLines += lines;
    this.schedule();
  }

  /** The reader has gone (a write failed for good): the lines are counted as dropped. */
  private lost(data: string | Uint8Array | Uint8Array[]): void {
    for (const d of Array.isArray(data) ? data : [data]) totals.droppedLines += countLines(d);
  }

  private schedule(): void {
    holding.add(this);
    // Unreferenced: held log lines never keep the process alive (the exit handler writes them).
    this.timer ??= setTimeout(this.retry, this.retryMs).unref();
  }

  private setHeld(bytes: number): void {
    totals.heldBytes += bytes - this.heldBytes;
    this.heldBytes = bytes;
  }
}

const exitPause = new Int32Array(new SharedArrayBuffer(4));

function countLines(data: string | Uint8Array): number {
  let lines = 0;
  if (typeof data === 'string') {
    for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) lines++;
  } else {
    const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) lines++;
  }
  return lines;
}

/** The warning after a gap, shaped like the process's other lines (pino's level, time, pid and hostname). */
function droppedWarning(droppedLines: number): string {
  return `${JSON.stringify({
    level: 'warn',
    time: new Date().toISOString(),
    pid: process.pid,
    hostname: hostname(),
    component: 'logging',
    dropped_lines: droppedLines,
    msg: `${droppedLines} log lines were dropped here: whatever reads this log stopped taking them for a while`,
  })}\n`;
}

let stdout: NonBlockingWriter | undefined;

/**
 * The process's stdout writer, one for every logger (its lines stay in order). Reading
 * `process.stdout` opens descriptor 1 through libuv, which makes a pipe or socket non-blocking
 * (`uv_pipe_open`): a write takes what the kernel has room for and never waits for the reader.
 * A file takes every write (waiting for the disk only); a terminal blocks as it always did.
 * `maxHeldBytes`, when given, sets the bound of what is held (one stdout, so the last one given).
 */
export function stdoutWriter(maxHeldBytes?: number): NonBlockingWriter {
  if (!stdout) {
    const fd = process.stdout.fd;
    stdout = new NonBlockingWriter({ write: (data) => (typeof data === 'string' ? writeSync(fd, data) : writeSync(fd, data)), maxHeldBytes: DEFAULT_LOG_BUFFER_MAX_BYTES });
  }
  if (maxHeldBytes !== undefined) stdout.maxHeldBytes = maxHeldBytes;
  return stdout;
}

// At exit, what each writer holds gets a last, bounded wait for the reader (there is no later).
process.on('exit', () => {
  for (const w of holding) w.flushSync();
});
