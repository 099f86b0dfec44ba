import { parseArgs } from 'node:util';
import { discardQuarantined, listQuarantined, retryQuarantined, type Database } from '@efs/db';

export interface OutboxIo {
  out(line: string): void;
}

const usage = 'usage: efs outbox quarantined [--schema S] [--all] [--json] | efs outbox retry (ID... | --all) [--schema S] | efs outbox discard ID... [--schema S]';

/**
 * `efs outbox`: what the relays could not publish. `quarantined` lists the rows set aside (with
 * why; `--all` includes discarded ones), `retry` puts rows back at their place in the outbox (a
 * running relay, or the next start, publishes them ahead of their key's later rows), `discard`
 * gives a row up (kept on record) so the rows of its key behind it flow. Returns the exit code.
 */
export async function outboxCommand(db: Database, allSchemas: readonly string[], args: string[], io: OutboxIo): Promise<number> {
  // Only the schemas of services that announce through an outbox (webhooks announces nothing).
  const schemas: string[] = [];
  for (const schema of allSchemas) {
    const { rows } = await db.knex.raw<{ rows: { t: string | null }[] }>('select to_regclass(?) as t', [`${schema}.outbox_quarantine`]);
    if (rows[0]?.t) schemas.push(schema);
  }
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { schema: { type: 'string' }, all: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
  });
  const [sub, ...ids] = positionals;
  if (values.schema && !schemas.includes(values.schema)) throw new Error(`unknown schema ${values.schema}; one of ${schemas.join(', ')}`);
  const targets = values.schema ? [values.schema] : [...schemas];
  switch (sub) {
    case 'quarantined': {
      let n = 0;
      for (const schema of targets) {
        for (const row of await listQuarantined(db.knex, schema, { includeDiscarded: values.all })) {
          n++;
          if (values.json) io.out(JSON.stringify({ schema, ...row }));
          else
            io.out(
              `${schema}\t${row.id}\t${row.topic}\t${row.key}\tquarantined ${row.quarantined_at.toISOString()}${row.discarded_at ? `\tdiscarded ${row.discarded_at.toISOString()}` : ''}\t${row.reason}`,
            );
        }
      }
      if (!values.json) io.out(n === 0 ? 'no quarantined outbox rows' : `${n} quarantined outbox row(s)`);
      return 0;
    }
    case 'retry':
    case 'discard': {
      if (sub === 'retry' ? ids.length === 0 && !values.all : ids.length === 0) throw new Error(usage);
      const done: string[] = [];
      for (const schema of targets) {
        const moved = sub === 'retry' ? await retryQuarantined(db.knex, schema, values.all ? [] : ids) : await discardQuarantined(db.knex, schema, ids);
        for (const id of moved) io.out(`${sub === 'retry' ? 'back in the outbox' : 'discarded'}: ${schema} ${id}`);
        done.push(...moved);
      }
      const missing = ids.filter((id) => !done.includes(id));
      for (const id of missing) io.out(`no quarantined row ${id}`);
      if (done.length > 0 && sub === 'retry') io.out('a running relay publishes them within a second (or the next start does)');
      return missing.length > 0 ? 1 : 0;
    }
    default:
      throw new Error(usage);
  }
}
