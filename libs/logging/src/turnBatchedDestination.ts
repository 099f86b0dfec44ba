import type { pino } from 'pino';

export type SyncStream = pino.DestinationStream & { flushSync(): void };

/** Destinations holding lines not yet written: written out if the process exits first. */
const withPendingLines = new Set<TurnBatchedDestination>();
process.on('exit', () => {
  for (const d of withPendingLines) d.flushSync();
});

/**
 * The process's log destination: the lines of one turn of the event loop are written together,
 * with one synchronous write at the end of the turn (`setImmediate`), instead of one write per
 * line through libuv's thread pool. Under load a turn ends many requests, and the access log's
 * line per request was ~22 µs of a GET's 84 µs of CPU in the embedded process, most of it the
 * write's round trip and sonic-boom's bookkeeping per line (bench/PROFILE.md). The process's
 * stdout is a NonBlockingWriter: the write takes what the kernel has room for and never waits
 * for whatever reads the logs (a reader that falls behind has lines held, then dropped and
 * counted). Lines still pending are written when the process exits (`process.exit` included).
 */
export class TurnBatchedDestination implements pino.DestinationStream {
  private lines: string[] = [];
  private scheduled = false;
  private readonly out: SyncStream;

  constructor(out: SyncStream) {
    this.out = out;
  }

  write(line: string): void {
    this.lines.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    withPendingLines.add(this);
    setImmediate(this.handOver);
  }

  /** pino's `logger.flush(cb)`: writes what is pending, then calls back. */
  flush(cb: (err?: Error) => void): void {
    this.handOver();
    cb();
  }

  /** Writes what is pending now. */
  flushSync(): void {
    this.handOver();
    this.out.flushSync();
  }

  private readonly handOver = (): void => {
    this.scheduled = false;
    withPendingLines.delete(this);
    if (this.lines.length === 0) return;
    const chunk = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.out.write(chunk);
  };
}
