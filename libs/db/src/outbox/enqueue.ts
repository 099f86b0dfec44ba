import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { assertBeforeRequestDeadline, outsideRequest, type Topic, type TopicValue } from '@efs/contracts';
import { injectTraceHeaders } from '@efs/telemetry';
import { copyInto } from '../copy.ts';
import type { Database } from '../database.ts';

const OUTBOX_COLUMNS = ['id', 'topic', 'key', 'value', 'headers'] as const;

/** An outbox row: the event's id, topic, key and value, with the trace headers it was written under. */
export const outboxRow = (topic: string, key: string, value: unknown, headers: string) => ({ id: randomUUID(), topic, key, value: JSON.stringify(value), headers });

/** From this many rows COPY beats multi-row inserts (one statement of 500 rows costs about as much as a COPY's setup). */
const COPY_FROM = 1000;

/**
 * Adds events to a schema's outbox inside the caller's transaction, for the schema's relay to
 * publish: the one way events go into an outbox besides `Outbox.writeWith`. `Outbox` is a writer
 * with the relay of this process, which a commit wakes; a writer alone stores rows for a relay
 * that runs elsewhere or later (a service's state re-announced at migration time or by the CLI).
 */
export class OutboxWriter {
  protected readonly schema: string;
  protected readonly topicNames: ReadonlySet<string>;
  protected readonly kind: Database['kind'] | undefined;

  /** `kind`, the database's kind: given, a large `enqueueMany` writes its rows with COPY. */
  constructor(opts: { schema: string; topics: readonly Topic[]; kind?: Database['kind'] | undefined }) {
    this.schema = opts.schema;
    this.topicNames = new Set(opts.topics.map((t) => t.name));
    this.kind = opts.kind;
  }

  /**
   * Adds an event to the outbox inside the caller's transaction; answers its row's id (see
   * `Outbox.published`). Inside a request past its deadline it throws SERVICE_UNAVAILABLE instead,
   * which rolls the transaction back: the caller has stopped waiting, so the change must not happen.
   */
  async enqueue<T extends Topic>(trx: Knex.Transaction, topic: T, key: string, value: TopicValue<T>): Promise<string[]> {
    return this.enqueueMany(trx, topic, [{ key, value }]);
  }

  /**
   * Adds many events of one topic at once, in the order given, as `enqueue` does one: with
   * multi-row inserts, or with COPY for thousands when the writer knows the database's kind;
   * answers the rows' ids.
   */
  async enqueueMany<T extends Topic>(trx: Knex.Transaction, topic: T, entries: readonly { key: string; value: TopicValue<T> }[]): Promise<string[]> {
    if (!this.topicNames.has(topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${topic.name}`);
    if (entries.length === 0) return [];
    assertBeforeRequestDeadline(`the ${topic.name} change`);
    const headers = JSON.stringify(injectTraceHeaders());
    const rows = entries.map((e) => outboxRow(topic.name, e.key, e.value, headers));
    if (this.kind !== undefined && entries.length >= COPY_FROM) {
      // The sequence (`seq`) numbers the rows in COPY's order, as it does a multi-row insert's.
      await copyInto(trx, this.kind, `"${this.schema}".outbox`, OUTBOX_COLUMNS, rows.map((row) => OUTBOX_COLUMNS.map((c) => row[c])));
    } else {
      for (let i = 0; i < rows.length; i += 500) await trx.withSchema(this.schema).table('outbox').insert(rows.slice(i, i + 500));
    }
    // The relay's pass is not the request's work: it runs free of the request's deadline.
    trx.executionPromise.then(() => outsideRequest(() => this.committed()), () => undefined);
    return rows.map((r) => r.id);
  }

  /** Called once a transaction that added events through this writer committed: a writer without a relay tells no one. */
  protected committed(): void {}
}
