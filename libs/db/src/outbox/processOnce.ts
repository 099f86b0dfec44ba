import type { Knex } from 'knex';

/**
 * Runs `fn` once per (consumer, message id): a redelivered message finds its id recorded and
 * gets the stored result instead of being applied again. The record and the change commit together.
 */
export async function processOnce<R>(
  knex: Knex,
  schema: string,
  consumer: string,
  messageId: string,
  fn: (trx: Knex.Transaction) => Promise<R>,
): Promise<{ duplicate: boolean; result: R }> {
  return knex.transaction(async (trx) => {
    const inserted = await trx
      .withSchema(schema)
      .table('processed_messages')
      .insert({ consumer, message_id: messageId })
      .onConflict(['consumer', 'message_id'])
      .ignore()
      .returning('message_id');
    if (inserted.length === 0) {
      const row = (await trx.withSchema(schema).table('processed_messages').where({ consumer, message_id: messageId }).first()) as { result: R } | undefined;
      return { duplicate: true, result: row?.result as R };
    }
    const result = await fn(trx);
    await trx
      .withSchema(schema)
      .table('processed_messages')
      .where({ consumer, message_id: messageId })
      .update({ result: JSON.stringify(result ?? null) });
    return { duplicate: false, result };
  });
}