import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Topic, TopicValue } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { injectTraceHeaders } from '@efs/telemetry';

/** What the outbox needs of a transport: publishing with a chosen message id. */
export interface Publisher {
  publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options?: { messageId?: string; headers?: Record<string, string> }): Promise<void>;
}

interface OutboxRow {
  id: string;
  topic: string;
  key: string;
  value: unknown;
  headers: Record<string, string>;
}

/**
 * Transactional outbox: a state change and the event announcing it are written in one
 * transaction; a relay publishes rows in order and deletes them once the broker has them. A
 * crash between publish and delete republishes with the same message id, which consumers ignore.
 */
export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private readonly topics = new Map<string, Topic>();

  private readonly knex: Knex;
  private readonly schema: string;
  private readonly publisher: Publisher;
  private readonly logger: Logger;
  private readonly pollMs: number;

  constructor(opts: { knex: Knex; schema: string; publisher: Publisher; logger: Logger; topics: readonly Topic[]; pollMs?: number }) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.publisher = opts.publisher;
    this.logger = opts.logger.child({ component: 'outbox' });
    this.pollMs = opts.pollMs ?? 500;
    for (const t of opts.topics) this.topics.set(t.name, t);
  }

  /** Adds an event to the outbox inside the caller's transaction. */
  async enqueue<T extends Topic>(trx: Knex.Transaction, topic: T, key: string, value: TopicValue<T>): Promise<void> {
    if (!this.topics.has(topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${topic.name}`);
    await trx
      .withSchema(this.schema)
      .table('outbox')
      .insert({ id: randomUUID(), topic: topic.name, key, value: JSON.stringify(value), headers: JSON.stringify(injectTraceHeaders()) });
    trx.executionPromise.then(() => this.kick(), () => undefined);
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      this.kick();
      this.timer = setTimeout(tick, this.pollMs);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Publishes what is waiting now; resolves when the outbox was drained once. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.drain()
      .catch((err: Error) => this.logger.warn({ err, schema: this.schema }, 'outbox relay failed; will retry'))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.kick();
        }
      });
    return this.running;
  }

  /** Resolves once everything enqueued so far has been published (tests, graceful shutdown). */
  async flush(): Promise<void> {
    for (;;) {
      await this.drain();
      const [{ count }] = (await this.knex.withSchema(this.schema).table('outbox').count({ count: '*' })) as [{ count: string | number }];
      if (Number(count) === 0) return;
    }
  }

  private async drain(): Promise<void> {
    for (;;) {
      const published = await this.knex.transaction(async (trx) => {
        const rows = (await trx.withSchema(this.schema).table('outbox').orderBy('seq').limit(100).forUpdate().skipLocked()) as OutboxRow[];
        // Handed over in order and awaited together: the transport keeps the order of what it is
        // given (Kafka: one producer queue, sent as one batch), so a burst costs one broker round
        // trip instead of one per row. Any failure rolls back and the rows are published again.
        await Promise.all(
          rows.map((row) => {
            const topic = this.topics.get(row.topic);
            if (!topic) throw new Error(`outbox row for unknown topic ${row.topic}`);
            const value = (typeof row.value === 'string' ? JSON.parse(row.value) : row.value) as TopicValue<Topic>;
            return this.publisher.publish(topic, row.key, value, { messageId: row.id, headers: row.headers });
          }),
        );
        if (rows.length > 0) await trx.withSchema(this.schema).table('outbox').whereIn('id', rows.map((r) => r.id)).delete();
        return rows.length;
      });
      if (published < 100) return;
    }
  }
}

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
