import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Knex } from 'knex';
import type { Database } from './database.ts';
import { transactionConnection } from './knexConnection.ts';

const SPECIAL = /[\\\t\n\r]/;

/**
 * One value in COPY's text format: NULL as \N, backslash, tab and line breaks escaped. `dates`
 * keeps the text of the times seen in this batch (a batch's rows mostly share a few).
 */
export function copyValue(v: unknown, dates: Map<number, string>): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  if (v instanceof Date) return copyTime(v.getTime(), dates);
  const s = String(v);
  // Most values need no escaping: test once rather than run four replacements on each.
  return SPECIAL.test(s) ? s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r') : s;
}

/** A time (epoch milliseconds) in COPY's text format, its ISO text kept in `dates` for the rest of the batch. */
function copyTime(ms: number, dates: Map<number, string>): string {
  let text = dates.get(ms);
  if (text === undefined) {
    if (dates.size >= 1024) dates.clear();
    dates.set(ms, (text = new Date(ms).toISOString()));
  }
  return text;
}

/** Bytes a chunk of COPY data (the last one smaller). */
const CHUNK = 1 << 16;
const TAB = 0x09;
const LINE_END = 0x0a;

/**
 * COPY data written straight into bytes, a value at a time: the UTF-8 of the text copyValue gives,
 * without a string per line, the joining of lines into chunks, and their conversion to bytes
 * (together ~28% of telemetry-ingest under load). ASCII text, the usual case, is written a
 * character at a time with its escapes; anything else takes copyValue's text and Buffer's UTF-8
 * encoder, so every byte is what converting copyValue's lines would give.
 *
 * The whole batch is encoded in memory before COPY starts (chunks() hands over every chunk at
 * once): about 160 bytes a telemetry reading of the bench, ~0.8 MB for a 5,000-reading transaction, and a write
 * that is retried encodes its rows again. Callers keep their batches bounded (telemetry-ingest:
 * TELEMETRY_BATCH_SIZE readings a transaction); there is no backpressure from the socket to the
 * encoding, only to the sending of the chunks (copyLines).
 */
export class CopyData {
  private readonly done: Buffer[] = [];
  private buf = Buffer.allocUnsafe(CHUNK);
  private at = 0;
  private readonly dates = new Map<number, string>();

  /** Makes room for `n` more bytes, starting a new chunk when this one has not. */
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    if (this.at > 0) this.done.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(Math.max(CHUNK, n));
    this.at = 0;
  }

  /**
   * Text as it is (no escaping): numbers, times, names a schema fixes. Room is made for the text
   * as ASCII (a byte a character); text that is not gets room for its UTF-8 length and is written
   * again whole (the bytes already put past `at` are not kept).
   */
  raw(s: string): this {
    const n = s.length;
    this.room(n);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.room(Buffer.byteLength(s, 'utf8'));
        this.at += this.buf.write(s, this.at, 'utf8');
        return this;
      }
      b[at++] = c;
    }
    this.at = at;
    return this;
  }

  /** A number as String writes it (`${n}`). */
  number(v: number): this {
    return this.raw(String(v));
  }

  /**
   * A value as copyValue writes it. Room is made for the text as plain ASCII (a byte a
   * character), the usual case; a value with an escape or a non-ASCII character starts again with
   * room for exactly what it needs, so a chunk is closed early only by a value that does not fit.
   */
  value(v: unknown): this {
    if (typeof v !== 'string') return this.raw(copyValue(v, this.dates));
    const n = v.length;
    this.room(n);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = v.charCodeAt(i);
      if (c >= 0x80 || c === 0x5c || c === 0x09 || c === 0x0a || c === 0x0d) return this.escaped(v);
      b[at++] = c;
    }
    this.at = at;
    return this;
  }

  /** A value with escapes or non-ASCII characters (the bytes value() already put past `at` are not kept). */
  private escaped(v: string): this {
    const n = v.length;
    let escapes = 0;
    for (let i = 0; i < n; i++) {
      const c = v.charCodeAt(i);
      if (c >= 0x80) return this.raw(copyValue(v, this.dates));
      if (c === 0x5c || c === 0x09 || c === 0x0a || c === 0x0d) escapes++;
    }
    this.room(n + escapes);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = v.charCodeAt(i);
      if (c === 0x5c || c === 0x09 || c === 0x0a || c === 0x0d) {
        b[at++] = 0x5c;
        b[at++] = c === 0x5c ? 0x5c : c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : 0x72;
      } else b[at++] = c;
    }
    this.at = at;
    return this;
  }

  /** A time (epoch milliseconds), as copyTime writes it. */
  time(ms: number): this {
    return this.raw(copyTime(ms, this.dates));
  }

  /** The column separator. */
  tab(): this {
    this.room(1);
    this.buf[this.at++] = TAB;
    return this;
  }

  /** The end of a row. */
  end(): this {
    this.room(1);
    this.buf[this.at++] = LINE_END;
    return this;
  }

  /** The data written, in chunks of about 64 kB. */
  chunks(): Buffer[] {
    return this.at > 0 ? [...this.done, this.buf.subarray(0, this.at)] : [...this.done];
  }
}

/** Rows as the data COPY reads: one line per row, columns separated by tabs. */
function rowData(rows: Iterable<readonly unknown[]>): Buffer[] {
  const out = new CopyData();
  for (const r of rows) {
    for (let i = 0; i < r.length; i++) (i === 0 ? out : out.tab()).value(r[i]);
    out.end();
  }
  return out.chunks();
}

/**
 * COPY rows into a table inside the caller's transaction: the cheapest way into Postgres for
 * thousands of rows (no statement to parse, no parameters to bind). On Postgres through
 * pg-copy-streams on the transaction's own connection; PGlite has no COPY FROM STDIN but reads
 * COPY FROM '/dev/blob' with the data passed beside the statement, so the embedded mode copies too.
 * `table` is used as given (quote it as it needs); columns are quoted here.
 */
export async function copyInto(trx: Knex.Transaction, kind: Database['kind'], table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  await copyLines(trx, kind, table, columns, rowData(rows));
}

/**
 * COPY data already in COPY's text format (whole lines, each ending in a line break; values
 * escaped as copyValue does, e.g. written with CopyData) into a table, as copyInto does: for
 * callers that encode their rows straight to COPY data rather than through arrays of values.
 * The chunks are all in memory already (see CopyData): the stream waits for the socket between
 * chunks, but nothing is encoded lazily.
 */
export async function copyLines(trx: Knex.Transaction, kind: Database['kind'], table: string, columns: readonly string[], chunks: readonly (string | Buffer)[]): Promise<void> {
  const cols = columns.map((c) => `"${c}"`).join(', ');
  if (kind === 'pglite') {
    // A Buffer is a BlobPart at run time; its type allows a SharedArrayBuffer, which Blob's does not.
    await trx.raw(`copy ${table} (${cols}) from '/dev/blob'`).options({ blob: new Blob(chunks as unknown as ConstructorParameters<typeof Blob>[0]) });
    return;
  }
  const connection = await transactionConnection<{ query(s: unknown): NodeJS.WritableStream }>(trx);
  await pipeline(Readable.from(chunks, { objectMode: false }), connection.query(copyFrom(`copy ${table} (${cols}) from stdin`)));
}
