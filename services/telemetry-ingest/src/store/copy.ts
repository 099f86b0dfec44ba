import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database, Knex } from '@efs/db';

/** One value in COPY's text format: NULL as \N, backslash, tab and line breaks escaped. */
function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  if (v instanceof Date) return v.toISOString();
  return String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** Rows as the text COPY reads: one line per row, columns separated by tabs. */
export function copyText(rows: readonly (readonly unknown[])[]): string {
  let out = '';
  for (const r of rows) out += r.map(copyValue).join('\t') + '\n';
  return out;
}

/**
 * COPY rows into a table inside the caller's transaction. On Postgres through pg-copy-streams on
 * the transaction's own connection; PGlite has no COPY FROM STDIN but reads COPY FROM '/dev/blob'
 * with the data passed beside the statement, so the embedded mode copies too.
 */
export async function copyInto(trx: Knex.Transaction, kind: Database['kind'], table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  const text = copyText(rows);
  const cols = columns.map((c) => `"${c}"`).join(', ');
  if (kind === 'pglite') {
    await trx.raw(`copy ${table} (${cols}) from '/dev/blob'`).options({ blob: new Blob([text]) });
    return;
  }
  const connection = (await (trx.client as { acquireConnection(): Promise<{ query(s: unknown): NodeJS.WritableStream }> }).acquireConnection());
  await pipeline(Readable.from([text]), connection.query(copyFrom(`copy ${table} (${cols}) from stdin`)));
}
