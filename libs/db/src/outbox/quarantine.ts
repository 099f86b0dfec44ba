import type { Knex } from 'knex';

/** An outbox row as the relay reads it. */
export interface OutboxRow {
  id: string;
  seq: string | number;
  topic: string;
  key: string;
  value: unknown;
  headers: Record<string, string> | string;
  created_at: Date | string;
}

/** A row the relay could not carry, kept with why. */
interface QuarantinedRow {
  id: string;
  seq: string;
  topic: string;
  key: string;
  value: unknown;
  reason: string;
  attempts: number;
  created_at: Date;
  quarantined_at: Date;
  discarded_at: Date | null;
}

/**
 * Moves a row from the outbox into `outbox_quarantine` with the reason, in one transaction. The
 * row keeps its id (its message id) and its seq (its place in the outbox), so a retry puts it
 * back where it was, ahead of the rows of its key that waited behind it.
 */
export async function quarantineRow(knex: Knex, schema: string, row: OutboxRow, reason: string, attempts: number): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx
      .withSchema(schema)
      .table('outbox_quarantine')
      .insert({
        id: row.id,
        seq: row.seq,
        topic: row.topic,
        key: row.key,
        value: typeof row.value === 'string' ? row.value : JSON.stringify(row.value),
        headers: typeof row.headers === 'string' ? row.headers : JSON.stringify(row.headers ?? {}),
        created_at: row.created_at,
        reason: reason.slice(0, 2000),
        attempts,
      })
      .onConflict('id')
      .ignore();
    await trx.withSchema(schema).table('outbox').where({ id: row.id }).delete();
  });
}

/** Quarantined rows of a schema, oldest first; discarded ones only when asked. */
export async function listQuarantined(knex: Knex, schema: string, opts: { includeDiscarded?: boolean } = {}): Promise<QuarantinedRow[]> {
  const q = knex.withSchema(schema).table('outbox_quarantine').orderBy('seq');
  if (!opts.includeDiscarded) q.whereNull('discarded_at');
  const rows = (await q) as (Omit<QuarantinedRow, 'seq' | 'created_at' | 'quarantined_at' | 'discarded_at'> & Record<'seq' | 'created_at' | 'quarantined_at' | 'discarded_at', unknown>)[];
  return rows.map((r) => ({
    ...r,
    seq: String(r.seq),
    value: typeof r.value === 'string' ? JSON.parse(r.value) : r.value,
    created_at: new Date(r.created_at as string),
    quarantined_at: new Date(r.quarantined_at as string),
    discarded_at: r.discarded_at ? new Date(r.discarded_at as string) : null,
  }));
}

/**
 * Puts quarantined rows back into the outbox at their old place (same id, same seq), so the relay
 * tries them again before the rows of their key that waited behind them (after a fix, or once
 * the broker takes them). `ids` empty means every quarantined row. Answers the ids moved back.
 */
export async function retryQuarantined(knex: Knex, schema: string, ids: readonly string[]): Promise<string[]> {
  return knex.transaction(async (trx) => {
    const q = trx.withSchema(schema).table('outbox_quarantine').whereNull('discarded_at').forUpdate();
    if (ids.length > 0) q.whereIn('id', [...ids]);
    const rows = (await q) as (OutboxRow & { seq: string })[];
    if (rows.length === 0) return [];
    await trx
      .withSchema(schema)
      .table('outbox')
      .insert(rows.map((r) => ({ id: r.id, seq: r.seq, topic: r.topic, key: r.key, value: JSON.stringify(r.value), headers: JSON.stringify(r.headers), created_at: r.created_at })));
    await trx.withSchema(schema).table('outbox_quarantine').whereIn('id', rows.map((r) => r.id)).delete();
    return rows.map((r) => r.id);
  });
}

/**
 * Gives up on quarantined rows: they stay on record (`discarded_at`) but no longer hold their
 * key, so the rows behind them flow. Answers the ids discarded.
 */
export async function discardQuarantined(knex: Knex, schema: string, ids: readonly string[]): Promise<string[]> {
  const rows = (await knex
    .withSchema(schema)
    .table('outbox_quarantine')
    .whereNull('discarded_at')
    .whereIn('id', [...ids])
    .update({ discarded_at: knex.fn.now() })
    .returning('id')) as { id: string }[];
  return rows.map((r) => r.id);
}
