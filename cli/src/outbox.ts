import { parseArgs } from 'node:util';
import { discardQuarantined, listQuarantined, retryQuarantined, type Database } from '@efs/db';
import { parseArgsOptions, usageLine, type CommandSpec } from './commandLine.ts';

export interface OutboxIo {
  out(line: string): void;
}

const schema = { type: 'string', value: 'S', help: "only this service schema's outbox (commissioning, enrollment, ...)" } as const;

export const outboxSpecs = {
  quarantined: {
    name: 'outbox quarantined',
    summary: 'Lists the outbox rows the relays could not publish, with why.',
    options: {
      schema,
      all: { type: 'boolean', default: false, help: 'include the rows given up with `efs outbox discard`' },
      json: { type: 'boolean', default: false, help: 'one JSON object a line' },
    },
  },
  retry: {
    name: 'outbox retry',
    summary: 'Puts quarantined rows back at their place in the outbox; a running relay (or the next start) publishes them ahead of their key\'s later rows.',
    positionals: { usage: '[ID...]', min: 0 },
    details: ['Give the IDs (from `efs outbox quarantined`) or --all.'],
    options: { schema, all: { type: 'boolean', default: false, help: 'every quarantined row, instead of the IDs given' } },
  },
  discard: {
    name: 'outbox discard',
    summary: 'Gives quarantined rows up (kept on record), so the rows of their key behind them flow.',
    positionals: { usage: 'ID...', min: 1 },
    options: { schema },
  },
} as const satisfies Record<string, CommandSpec>;

const usage = `usage: ${Object.values(outboxSpecs).map(usageLine).join(' | ')}`;
const isSub = (sub: string | undefined): sub is keyof typeof outboxSpecs => sub !== undefined && Object.hasOwn(outboxSpecs, sub);

/**
 * `efs outbox`: what the relays could not publish. `quarantined` lists the rows set aside (with
 * why; `--all` includes discarded ones), `retry` puts rows back at their place in the outbox (a
 * running relay, or the next start, publishes them ahead of their key's later rows), `discard`
 * gives a row up (kept on record) so the rows of its key behind it flow. Returns the exit code.
 */
export async function outboxCommand(db: Database, allSchemas: readonly string[], sub: string | undefined, args: string[], io: OutboxIo): Promise<number> {
  if (!isSub(sub)) throw new Error(usage);
  // Only the schemas of services that announce through an outbox (webhooks announces nothing).
  const schemas: string[] = [];
  for (const schema of allSchemas) {
    const { rows } = await db.knex.raw<{ rows: { t: string | null }[] }>('select to_regclass(?) as t', [`${schema}.outbox_quarantine`]);
    if (rows[0]?.t) schemas.push(schema);
  }
  const targetsOf = (only: string | undefined) => {
    if (only && !schemas.includes(only)) throw new Error(`unknown schema ${only}; one of ${schemas.join(', ')}`);
    return only ? [only] : [...schemas];
  };
  const move = async (what: 'retry' | 'discard', targets: string[], ids: string[], moveIn: (schema: string) => Promise<string[]>) => {
    const done: string[] = [];
    for (const schema of targets) {
      const moved = await moveIn(schema);
      for (const id of moved) io.out(`${what === 'retry' ? 'back in the outbox' : 'discarded'}: ${schema} ${id}`);
      done.push(...moved);
    }
    const missing = ids.filter((id) => !done.includes(id));
    for (const id of missing) io.out(`no quarantined row ${id}`);
    if (done.length > 0 && what === 'retry') io.out('a running relay publishes them within a second (or the next start does)');
    return missing.length > 0 ? 1 : 0;
  };
  switch (sub) {
    case 'quarantined': {
      const { values } = parseArgs({ args, options: parseArgsOptions(outboxSpecs.quarantined) });
      let n = 0;
      for (const schema of targetsOf(values.schema)) {
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
    case 'retry': {
      const { values, positionals: ids } = parseArgs({ args, allowPositionals: true, options: parseArgsOptions(outboxSpecs.retry) });
      if (ids.length === 0 && !values.all) throw new Error(usage);
      return move('retry', targetsOf(values.schema), ids, (schema) => retryQuarantined(db.knex, schema, values.all ? [] : ids));
    }
    case 'discard': {
      const { values, positionals: ids } = parseArgs({ args, allowPositionals: true, options: parseArgsOptions(outboxSpecs.discard) });
      if (ids.length === 0) throw new Error(usage);
      return move('discard', targetsOf(values.schema), ids, (schema) => discardQuarantined(db.knex, schema, ids));
    }
    default:
      throw new Error(usage);
  }
}
