import type { Knex } from 'knex';
import { assertBeforeRequestDeadline, outsideRequest, type Topic, type TopicValue } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { injectTraceHeaders } from '@efs/telemetry';
import type { Database } from '../database.ts';
import { withPoolConnection } from '../knexConnection.ts';
import { CommitBus } from './commitBus.ts';
import { OutboxWriter, outboxRow } from './enqueue.ts';
import { observeOutbox } from './outboxMetrics.ts';
import { OutboxRelay, type Publisher } from './relay.ts';

export type { Publisher } from './relay.ts';

interface OutboxOptions {
  knex: Knex;
  schema: string;
  /** The service that owns the schema: the `service` label of the outbox's gauges (default: the schema's name). */
  service?: string;
  publisher: Publisher;
  logger: Logger;
  topics: readonly Topic[];
  /**
   * How often the relay looks for rows it was not told about: a commit through `enqueue` wakes
   * this process's relay at once, so the poll only finds what another process wrote (the CLI,
   * another replica). Every poll is a lease renewal and a select, so it is what an idle relay costs.
   */
  pollMs?: number;
  /** Rows read and handed over at once. */
  batchSize?: number;
  /** The database's kind: given, a large `enqueueMany` writes its rows with COPY. */
  kind?: Database['kind'];
  /** Failures of a row while other rows publish fine, before it is quarantined. */
  maxAttempts?: number;
  /** First wait before a failed row (or, in an outage, the whole relay) tries again; doubles up to maxBackoffMs. */
  retryBaseMs?: number;
  maxBackoffMs?: number;
  /** How long this relay's lease on the schema's outbox lasts without renewal (a crashed holder is replaced after it). */
  leaseMs?: number;
}

/** An event for `Outbox.writeWith`; `outboxEvent` builds one with its value checked against its topic. */
export interface OutboxEvent {
  topic: Topic;
  key: string;
  value: unknown;
  /** Trace headers of the request the event belongs to (group commit); absent: the writer's current ones. */
  headers?: Record<string, string>;
}

export const outboxEvent = <T extends Topic>(topic: T, key: string, value: TopicValue<T>): OutboxEvent => ({ topic, key, value });

/**
 * Transactional outbox: a state change and the event announcing it are written in one
 * transaction; a relay publishes rows in order and deletes each once the transport has it durably.
 * A crash between publish and delete republishes with the same message id, which consumers ignore.
 *
 * One row never stops the others. A row whose value the topic's Avro schema refuses (or that
 * names an unknown topic) is quarantined at once: moved to `outbox_quarantine` with the reason
 * and logged (`efs.outbox.rows.quarantined` counts what is held there). A row the transport keeps refusing while other
 * rows go through is retried alone with backoff and quarantined after `maxAttempts`. Order per
 * key is kept: the later rows of a key wait behind its failing or quarantined row (until it is
 * retried or discarded, `efs outbox`), and rows of every other key keep flowing. When nothing
 * goes through at all (the broker is down) the relay pauses with backoff and says so once, not
 * on every poll. Several processes sharing a schema take turns through a lease, so one relay at
 * a time publishes and keys keep their order.
 */
export class Outbox extends OutboxWriter {
  private readonly knex: Knex;
  private readonly logger: Logger;
  private readonly bus: CommitBus;
  private readonly relay: OutboxRelay;
  private readonly service: string;
  private stopObserving: (() => void) | undefined;

  constructor(opts: OutboxOptions) {
    super({ schema: opts.schema, topics: opts.topics, kind: opts.kind });
    this.knex = opts.knex;
    this.service = opts.service ?? opts.schema;
    this.logger = opts.logger.child({ component: 'outbox', schema: opts.schema });
    this.bus = new CommitBus(this.logger);
    this.relay = new OutboxRelay({
      knex: opts.knex,
      schema: opts.schema,
      publisher: opts.publisher,
      logger: this.logger,
      topics: opts.topics,
      pollMs: opts.pollMs ?? 5000,
      batchSize: opts.batchSize ?? 100,
      maxAttempts: opts.maxAttempts ?? 5,
      retryBaseMs: opts.retryBaseMs ?? 1000,
      maxBackoffMs: opts.maxBackoffMs ?? 30_000,
      leaseMs: opts.leaseMs ?? 10_000,
    });
  }

  /**
   * Resolves true once the committed rows of these ids have been published (a relay deletes a row
   * once the transport has it: Kafka, acknowledged by the brokers), whichever process's relay
   * published them; false at `timeoutMs`, or when one of them was quarantined instead. For a write
   * that answers only once its announcement is out, so that a reader of the topic who asks after
   * the answer finds it there (the catalog's programs, which commissioning reads from the topic).
   */
  published(ids: readonly string[], timeoutMs: number): Promise<boolean> {
    return this.relay.published(ids, timeoutMs);
  }

  /**
   * Runs `changes` (insert, update or delete builders on this schema's tables) and adds the events
   * announcing them, all in one statement (data-modifying common table expressions): atomic
   * without a transaction, one round trip instead of a BEGIN, a statement per change, the outbox
   * insert and a COMMIT. The changes run on one snapshot and cannot see each other's rows, but
   * foreign keys are checked at the end of the statement (a device's site may be inserted beside
   * it; unique keys are checked row by row). Events are stored in the order given, in one VALUES
   * list (keep them to a few hundred: 5 binds each); at least one is required.
   *
   * The request's deadline is checked once the statement holds its connection, so time spent
   * waiting for one (a busy pool, PGlite's single connection) is covered: a request answered 503
   * has stored nothing. A lock wait inside the statement (another writer of the same unique key)
   * is not; such writers are serialised per key before they get here.
   */
  async writeWith(changes: readonly Knex.QueryBuilder[], events: readonly OutboxEvent[]): Promise<void> {
    const what = this.checkEvents(events);
    assertBeforeRequestDeadline(what);
    await this.writeComposed(() => {
      assertBeforeRequestDeadline(what);
      return { changes, events };
    });
  }

  /**
   * `writeWith` of what `compose` answers once the statement holds its connection (nothing when it
   * answers undefined): for group commit, where several requests' writes go in one statement and
   * `compose` leaves out those whose request passed its deadline while the connection was awaited.
   * Events without headers get the trace headers current when `compose` runs. It checks no
   * request deadline itself: `compose` checks those of the writes it takes.
   */
  async writeComposed(compose: () => { changes: readonly Knex.QueryBuilder[]; events: readonly OutboxEvent[] } | undefined): Promise<void> {
    const stored = await withPoolConnection(this.knex, async (connection) => {
      const write = compose();
      if (!write) return false;
      this.checkEvents(write.events);
      // Consecutive events of one request share their headers object: its text is made once.
      const current = write.events.some((e) => !e.headers) ? injectTraceHeaders() : undefined;
      let last: Record<string, string> | undefined;
      let text = '';
      const rows = write.events.map((e) => {
        const headers = e.headers ?? current!;
        if (headers !== last) [last, text] = [headers, JSON.stringify(headers)];
        return outboxRow(e.topic.name, e.key, e.value, text);
      });
      const statement = write.changes.reduce((q, change, i) => q.with(`change_${i}`, change), this.knex.withSchema(this.schema).table('outbox'));
      await statement.insert(rows).connection(connection);
      return true;
    });
    if (!stored) return;
    // Committed: the relay's pass is not the request's work, it runs free of the request's deadline.
    outsideRequest(() => this.committed());
  }

  /**
   * Calls `listener` after a commit that added events through this outbox (once per `enqueue`,
   * `enqueueMany`, `writeWith` or `writeComposed` call that stored some; a composed statement may
   * carry several requests' events), outside the request: what else wants to know that this process
   * changed its schema (a scheduler sleeping until its next due row). Not called for other
   * processes' commits. A listener's exception is logged, never thrown to the writer.
   */
  onCommit(listener: () => void): void {
    this.bus.on(listener);
  }

  protected override committed(): void {
    void this.kick();
    this.bus.emit();
  }

  /** What an event list stores, for deadline messages; throws for an empty list or a topic this outbox does not publish to. */
  private checkEvents(events: readonly OutboxEvent[]): string {
    if (events.length === 0) throw new Error('writeWith needs at least one event');
    for (const e of events) if (!this.topicNames.has(e.topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${e.topic.name}`);
    return `the ${events[0]!.topic.name} change`;
  }

  /** Starts the relay, and the gauges read at every scrape (outboxMetrics.ts). */
  start(): void {
    this.relay.start();
    this.stopObserving ??= observeOutbox(this.knex, this.schema, this.service);
  }

  stop(): Promise<void> {
    this.stopObserving?.();
    this.stopObserving = undefined;
    return this.relay.stop();
  }

  /** Rows quarantined by this relay since it was made. */
  get quarantined(): number {
    return this.relay.quarantined;
  }

  /** Publishes what is waiting now; resolves when the outbox was drained once. */
  kick(): Promise<void> {
    return this.relay.kick();
  }

  /**
   * Resolves once every row enqueued so far that can be published has been (tests, graceful
   * shutdown, the CLI): rows held behind a quarantined row of their key stay. Rejects with the
   * transport's error when a row cannot be published now; waits while another process's relay
   * holds the lease (that relay publishes the rows).
   */
  flush(): Promise<void> {
    return this.relay.flush();
  }
}
