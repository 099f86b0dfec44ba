import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Knex } from 'knex';
import type { Database } from './database.ts';

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
export function copyTime(ms: number, dates: Map<number, string>): string {
  let text = dates.get(ms);
  if (text === undefined) {
    if (dates.size >= 1024) dates.clear();
    dates.set(ms, (text = new Date(ms).toISOString()));
  }
  return text;
}

/** About this many characters a chunk: small strings convert to the socket's bytes cheaply, unlike one string of the whole batch. */
const CHUNK = 1 << 16;

/** Lines (each ending in a line break) joined into chunks of whole lines. */
function* chunked(lines: Iterable<string>): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

/** Rows as the text COPY reads: one line per row, columns separated by tabs. */
function* rowLines(rows: Iterable<readonly unknown[]>): Generator<string> {
  const dates = new Map<number, string>();
  for (const r of rows) {
    let line = r.length === 0 ? '' : copyValue(r[0], dates);
    for (let i = 1; i < r.length; i++) line += '\t' + copyValue(r[i], dates);
    yield line + '\n';
  }
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
  await copyLines(trx, kind, table, columns, rowLines(rows));
}

/**
 * COPY lines already in COPY's text format (each ending in a line break; values escaped with
 * copyValue) into a table, as copyInto does: for callers that encode their rows straight to text
 * rather than through arrays of values.
 */
export async function copyLines(trx: Knex.Transaction, kind: Database['kind'], table: string, columns: readonly string[], lines: Iterable<string>): Promise<void> {
  const cols = columns.map((c) => `"${c}"`).join(', ');
  if (kind === 'pglite') {
    await trx.raw(`copy ${table} (${cols}) from '/dev/blob'`).options({ blob: new Blob([...chunked(lines)]) });
    return;
  }
  const connection = (await (trx.client as { acquireConnection(): Promise<{ query(s: unknown): NodeJS.WritableStream }> }).acquireConnection());
  await pipeline(Readable.from(chunked(lines), { objectMode: false }), connection.query(copyFrom(`copy ${table} (${cols}) from stdin`)));
}
