import type { Knex } from './database.ts';

/**
 * Runs a read in a transaction whose statements the database stops after `timeoutMs`
 * (`statement_timeout`, local to the transaction; PGlite takes it too): what a metrics scrape
 * reads must never hold a connection longer than the scrape waits for it.
 */
export async function boundedRead<T>(knex: Knex, timeoutMs: number, read: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw(`select set_config('statement_timeout', ?, true)`, [String(timeoutMs)]);
    return read(trx);
  });
}
