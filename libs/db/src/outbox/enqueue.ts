import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { assertBeforeRequestDeadline, outsideRequest, type Topic, type TopicValue } from '@efs/contracts';
import { injectTraceHeaders } from '@efs/telemetry';
import { copyInto } from '../copy.ts';
import type { Database } from '../database.ts';

/**
 * Adds an event to a schema's outbox inside the caller's transaction (the relay of that schema
 * publishes it). Inside a request past its deadline it throws SERVICE_UNAVAILABLE instead, which
 * rolls the transaction back: the caller has stopped waiting, so the change must not happen.
 */
export async function enqueueEvent<T extends Topic>(trx: Knex.Transaction, schema: string, topic: T, key: string, value: TopicValue<T>): Promise<void> {
  assertBeforeRequestDeadline(`the ${topic.name} change`);
  await trx.withSchema(schema).table('outbox').insert(outboxRow(topic.name, key, value, JSON.stringify(injectTraceHeaders())));
}

const OUTBOX_COLUMNS = ['id', 'topic', 'key', 'value', 'headers'] as const;

/** An outbox row: the event's id, topic, key and value, with the trace headers it was written under. */
export const outboxRow = (topic: string, key: string, value: unknown, headers: string) => ({ id: randomUUID(), topic, key, value: JSON.stringify(value), headers });

/**
 * Adds many events of one topic at once (re-announcing a service's state), in the order given;
 * answers the rows' ids (see `Outbox.published`). With the database's `kind`, thousands of rows go
 * in with COPY rather than multi-row inserts.
 */
export async function enqueueEvents<T extends Topic>(
  trx: Knex.Transaction,
  schema: string,
  topic: T,
  events: readonly { key: string; value: TopicValue<T> }[],
  opts: { kind?: Database['kind'] } = {},
): Promise<string[]> {
  assertBeforeRequestDeadline(`the ${topic.name} change`);
  const headers = JSON.stringify(injectTraceHeaders());
  const rows = events.map((e) => outboxRow(topic.name, e.key, e.value, headers));
  if (opts.kind !== undefined && events.length >= COPY_FROM) {
    // The sequence (`seq`) numbers the rows in COPY's order, as it does a multi-row insert's.
    await copyInto(trx, opts.kind, `"${schema}".outbox`, OUTBOX_COLUMNS, rows.map((row) => OUTBOX_COLUMNS.map((c) => row[c])));
  } else {
    for (let i = 0; i < rows.length; i += 500) await trx.withSchema(schema).table('outbox').insert(rows.slice(i, i + 500));
  }
  return rows.map((r) => r.id);
}

/** From this many rows COPY beats multi-row inserts (one statement of 500 rows costs about as much as a COPY's setup). */
const COPY_FROM = 1000;

/**
 * Adds events to a schema's outbox inside the caller's transaction, for the schema's relay to
 * publish. `Outbox` is one with the relay of this process; a writer alone stores rows for a relay
 * that runs elsewhere or later (a re-announcement at migration time, the CLI).
 */
export class OutboxWriter {
  protected readonly schema: string;
  protected readonly topicNames: ReadonlySet<string>;
  protected readonly kind: Database['kind'] | undefined;

  constructor(opts: { schema: string; topics: readonly Topic[]; kind?: Database['kind'] | undefined }) {
    this.schema = opts.schema;
    this.topicNames = new Set(opts.topics.map((t) => t.name));
    this.kind = opts.kind;
  }

  /** Adds an event to the outbox inside the caller's transaction; answers its row's id (see `Outbox.published`). */
  async enqueue<T extends Topic>(trx: Knex.Transaction, topic: T, key: string, value: TopicValue<T>): Promise<string[]> {
    return this.enqueueMany(trx, topic, [{ key, value }]);
  }

  /** Adds many events of one topic with multi-row inserts, or COPY for thousands when the outbox knows the database's kind; answers the rows' ids. */
  async enqueueMany<T extends Topic>(trx: Knex.Transaction, topic: T, entries: readonly { key: string; value: TopicValue<T> }[]): Promise<string[]> {
    if (!this.topicNames.has(topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${topic.name}`);
    if (entries.length === 0) return [];
    const ids = await enqueueEvents(trx, this.schema, topic, entries, this.kind === undefined ? {} : { kind: this.kind });
    // The relay's pass is not the request's work: it runs free of the request's deadline.
    trx.executionPromise.then(() => outsideRequest(() => this.committed()), () => undefined);
    return ids;
  }

  /** Called once a transaction that added events through this writer committed: a writer without a relay tells no one. */
  protected committed(): void {}
}
