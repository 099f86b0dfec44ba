import type { Knex } from 'knex';

/**
 * Every use of knex's private client API in the project, in one place (conventions habit 20).
 *
 * Checked against knex 3.3.0 (KNEX_CHECKED_VERSION; libs/db/test/knexConnection.unit.test.ts fails
 * when the installed knex is another version: read the two functions below against its
 * lib/client.js and lib/execution/transaction.js, then update the constant).
 *
 * Why private: knex has no documented way to hold one of its pool's connections for a single
 * statement, nor to reach the driver connection under a transaction (knex/knex#756, still open,
 * whose workaround is `client.acquireConnection()`). Both are needed here:
 * - `withPoolConnection`: `Outbox.writeComposed` composes its statement only once the statement
 *   holds a connection, so a request that passed its deadline while it waited (a busy pool,
 *   PGlite's one connection) stores nothing. The public alternative, a transaction, costs a BEGIN
 *   and a COMMIT round trip per write, which the one-statement write avoids (bench/PROFILE.md: a
 *   commission went from 6 statements to 1 with `Outbox.writeWith`). knex 3.3's public
 *   `connectionPool` option (an external pg.Pool) would serve Postgres but not PGlite.
 * - `transactionConnection`: COPY FROM STDIN (pg-copy-streams) runs on the pg client itself, and
 *   must run on the caller's transaction's client to commit with it. A transaction's knex client
 *   answers `acquireConnection()` with the transaction's own connection and releases nothing.
 */
export const KNEX_CHECKED_VERSION = '3.3.0';

/** knex's client as the two functions use it (lib/client.js: `acquireConnection`, `releaseConnection`). */
interface PrivateClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
}

const clientOf = (knex: Knex): PrivateClient => knex.client as PrivateClient;

/**
 * Runs `fn` with one connection of the pool held for it (outside any transaction), released when
 * `fn` settles; `fn` runs its statements on it with the documented `.connection(connection)`.
 */
export async function withPoolConnection<T>(knex: Knex, fn: (connection: unknown) => Promise<T>): Promise<T> {
  const client = clientOf(knex);
  const connection = await client.acquireConnection();
  try {
    return await fn(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** The driver's connection under `trx` (on Postgres a pg client); nothing to release, the transaction keeps it. */
export async function transactionConnection<C>(trx: Knex.Transaction): Promise<C> {
  return (await clientOf(trx).acquireConnection()) as C;
}

/** What the pool holds now (tarn's counters, lib/client.js `client.pool`), or undefined before knex made its pool or after it was destroyed. */
export interface PoolStats {
  used: number;
  idle: number;
  /** Acquires waiting for a connection. */
  pending: number;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/**
 * knex has no public view of its pool's occupancy (its `pool` option is passed to tarn, whose
 * counters are public API of tarn, but the pool object is reached through the private `client.pool`).
 */
export function poolStats(knex: Knex): PoolStats | undefined {
  const pool = (knex.client as { pool?: TarnPool | undefined }).pool;
  if (!pool || typeof pool.numUsed !== 'function') return undefined;
  return { used: pool.numUsed(), idle: pool.numFree(), pending: pool.numPendingAcquires() };
}
