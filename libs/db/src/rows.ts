import type { DomainOf, Fields, WireOf } from '@efs/contracts';

/** A jsonb column's value: Postgres answers it parsed, PGlite in some queries as text. */
export const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

/** A Postgres unique violation (a concurrent insert of the same key), of the named constraint when given. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * Whether an error says the database cannot be reached or serve now (a refused, reset or ended
 * connection, a pool or statement timeout, a server shutting down or out of resources), rather
 * than something about the statement's own data: a write failing so fails the same way whatever
 * part of it is tried again, so splitting it up only multiplies the waits.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'KnexTimeoutError') return true;
  const code = typeof e.code === 'string' ? e.code : '';
  // Node's socket errors (ECONNREFUSED, ECONNRESET, ETIMEDOUT…), SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention), 58 (system).
  if (/^E[A-Z]+$/.test(code) || /^(08|53|57|58)[0-9A-Z]{3}$/.test(code)) return true;
  return typeof e.message === 'string' && /Connection terminated|connection (is )?closed|Client has encountered a connection error/i.test(e.message);
}

/**
 * Of several states of rows, the one per key that applying them in turn leaves when the newest
 * `updated_at` wins and a later equal one replaces an earlier: what a batch upsert writes, since
 * one statement cannot change a row twice.
 */
export function newestByKey<V>(states: readonly V[], keyOf: (v: V) => string, updatedAt: (v: V) => number): V[] {
  const kept = new Map<string, V>();
  for (const v of states) {
    const k = keyOf(v);
    const before = kept.get(k);
    if (!before || updatedAt(before) <= updatedAt(v)) kept.set(k, v);
  }
  return [...kept.values()];
}

interface RowMapping<Fs extends Fields> {
  /** The columns of a value (kept or as it travels): lists, maps and records as JSON text. */
  toRow(value: DomainOf<Fs> | WireOf<Fs>): Record<string, unknown>;
  /** The value of a row: timestamps as Date, bigint columns (text in Postgres) as numbers, jsonb parsed. */
  fromRow(row: Record<string, unknown>): DomainOf<Fs>;
}

/**
 * How an entity's fields are stored: one column each, named after the field; lists, maps and
 * records in jsonb columns, timestamps in timestamptz, `long` fields in bigint.
 */
export function rowMapping<const Fs extends Fields>(fields: Fs): RowMapping<Fs> {
  const entries = Object.entries(fields);
  const structured = (kind: string) => kind === 'array' || kind === 'map' || kind === 'record';
  return {
    toRow(value) {
      const v = value as Record<string, unknown>;
      return Object.fromEntries(entries.map(([k, f]) => [k, structured(f.kind) && v[k] !== null && v[k] !== undefined ? JSON.stringify(v[k]) : v[k]]));
    },
    fromRow(row) {
      return Object.fromEntries(
        entries.map(([k, f]) => {
          const v = row[k];
          if (v === null || v === undefined) return [k, null];
          if (f.kind === 'timestamp') return [k, new Date(v as Date | string)];
          if (f.kind === 'long') return [k, Number(v)];
          if (structured(f.kind)) return [k, json(v)];
          return [k, v];
        }),
      ) as unknown as DomainOf<Fs>;
    },
  };
}
