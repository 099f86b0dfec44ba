import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { metrics } from '@opentelemetry/api';
import avro from 'avsc';
import type { Knex } from 'knex';
import { assertBeforeRequestDeadline, outsideRequest, type Topic, type TopicValue } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { injectTraceHeaders } from '@efs/telemetry';
import type { Database } from '../database.ts';
import { enqueueEvents, outboxRow } from './enqueue.ts';
import { quarantineRow, type OutboxRow } from './quarantine.ts';

/**
 * What the outbox needs of a transport: publishing with a chosen message id. The promise
 * resolves once the message is durable elsewhere (Kafka: acknowledged by the brokers; in-process:
 * handled by every consumer), which is when the relay deletes its row.
 */
export interface Publisher {
  publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options?: { messageId?: string; headers?: Record<string, string> }): Promise<void>;
}

export interface OutboxOptions {
  knex: Knex;
  schema: string;
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

/** What one pass of the relay did. */
interface PassOutcome {
  selected: number;
  published: number;
  failed: number;
  quarantined: number;
  error?: Error;
  /** Another process's relay holds the schema's lease. */
  elsewhere?: boolean;
}

/** A row the transport refused, remembered between passes (not across restarts: a restart starts its count again). */
interface Failure {
  topic: string;
  key: string;
  /** Failures counted against the row: those while other rows were published, so not an outage. */
  counted: number;
  failures: number;
  lastFailureAt: number;
  nextAt: number;
  error: string;
}

const quarantinedCounter = metrics.getMeter('efs').createCounter('efs.outbox.quarantined', { description: 'Outbox rows the relay could not carry, set aside in outbox_quarantine' });


const keyOf = (topic: string, key: string) => `${topic}\u0000${key}`;

/**
 * Transactional outbox: a state change and the event announcing it are written in one
 * transaction; a relay publishes rows in order and deletes each once the transport has it durably.
 * A crash between publish and delete republishes with the same message id, which consumers ignore.
 *
 * One row never stops the others. A row whose value the topic's Avro schema refuses (or that
 * names an unknown topic) is quarantined at once: moved to `outbox_quarantine` with the reason,
 * counted (`efs.outbox.quarantined`) and logged. A row the transport keeps refusing while other
 * rows go through is retried alone with backoff and quarantined after `maxAttempts`. Order per
 * key is kept: the later rows of a key wait behind its failing or quarantined row (until it is
 * retried or discarded, `efs outbox`), and rows of every other key keep flowing. When nothing
 * goes through at all (the broker is down) the relay pauses with backoff and says so once, not
 * on every poll. Several processes sharing a schema take turns through a lease, so one relay at
 * a time publishes and keys keep their order.
 */
export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private turn: Promise<unknown> = Promise.resolve();
  private readonly topics = new Map<string, { topic: Topic; type: avro.Type }>();
  private readonly failing = new Map<string, Failure>();
  private lastSuccessAt = 0;
  private pausedUntil = 0;
  private pauseStep = 0;
  private outageSince: number | undefined;
  private outageLoggedAt = 0;
  private leaseUntil = 0;
  private quarantinedTotal = 0;
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  private readonly knex: Knex;
  private readonly schema: string;
  private readonly publisher: Publisher;
  private readonly logger: Logger;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly maxBackoffMs: number;
  private readonly leaseMs: number;
  private readonly kind: Database['kind'] | undefined;
  private readonly commitListeners: (() => void)[] = [];

  constructor(opts: OutboxOptions) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.publisher = opts.publisher;
    this.logger = opts.logger.child({ component: 'outbox', schema: opts.schema });
    this.pollMs = opts.pollMs ?? 5000;
    this.batchSize = opts.batchSize ?? 100;
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.retryBaseMs = opts.retryBaseMs ?? 1000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.leaseMs = opts.leaseMs ?? 10_000;
    this.kind = opts.kind;
    for (const t of opts.topics) this.topics.set(t.name, { topic: t, type: avro.Type.forSchema(t.schema as avro.Schema) });
  }

  /** Adds an event to the outbox inside the caller's transaction; answers its row's id (see `published`). */
  async enqueue<T extends Topic>(trx: Knex.Transaction, topic: T, key: string, value: TopicValue<T>): Promise<string[]> {
    return this.enqueueMany(trx, topic, [{ key, value }]);
  }

  /** Adds many events of one topic with multi-row inserts, or COPY for thousands when the outbox knows the database's kind; answers the rows' ids. */
  async enqueueMany<T extends Topic>(trx: Knex.Transaction, topic: T, entries: readonly { key: string; value: TopicValue<T> }[]): Promise<string[]> {
    if (!this.topics.has(topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${topic.name}`);
    if (entries.length === 0) return [];
    const ids = await enqueueEvents(trx, this.schema, topic, entries, this.kind === undefined ? {} : { kind: this.kind });
    // The relay's pass is not the request's work: it runs free of the request's deadline.
    trx.executionPromise.then(() => outsideRequest(() => this.committed()), () => undefined);
    return ids;
  }

  /**
   * Resolves true once the committed rows of these ids have been published (a relay deletes a row
   * once the transport has it: Kafka, acknowledged by the brokers), whichever process's relay
   * published them; false at `timeoutMs`, or when one of them was quarantined instead. For a write
   * that answers only once its announcement is out, so that a reader of the topic who asks after
   * the answer finds it there (the catalog's programs, which commissioning reads from the topic).
   */
  async published(ids: readonly string[], timeoutMs: number): Promise<boolean> {
    if (ids.length === 0) return true;
    const deadline = Date.now() + timeoutMs;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      // This process's relay publishes them, or waits while another process's holds the lease. Its
      // pass is not awaited: on a slow broker a send may take the producer's own timeout (30 s and
      // retries), far past `timeoutMs`, and the caller must have its answer by then.
      outsideRequest(() => this.kick()).catch(() => undefined);
      const [{ left, quarantined }] = (
        (await this.knex.raw('select (select count(*) from ??.outbox where id = any(?::uuid[])) as "left", (select count(*) from ??.outbox_quarantine where id = any(?::uuid[])) as quarantined', [this.schema, [...ids], this.schema, [...ids]])) as {
          rows: [{ left: string | number; quarantined: string | number }];
        }
      ).rows;
      if (Number(quarantined) > 0) return false;
      if (Number(left) === 0) return true;
      if (Date.now() + wait > deadline) return false;
      await new Promise((r) => setTimeout(r, wait));
    }
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
    const client = this.knex.client as { acquireConnection(): Promise<unknown>; releaseConnection(c: unknown): Promise<unknown> };
    const connection = await client.acquireConnection();
    try {
      const write = compose();
      if (!write) return;
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
    } finally {
      await client.releaseConnection(connection);
    }
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
    this.commitListeners.push(listener);
  }

  private committed(): void {
    void this.kick();
    for (const listener of this.commitListeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err }, 'an outbox commit listener failed');
      }
    }
  }

  /** What an event list stores, for deadline messages; throws for an empty list or a topic this outbox does not publish to. */
  private checkEvents(events: readonly OutboxEvent[]): string {
    if (events.length === 0) throw new Error('writeWith needs at least one event');
    for (const e of events) if (!this.topics.has(e.topic.name)) throw new Error(`outbox of ${this.schema} does not publish to ${e.topic.name}`);
    return `the ${events[0]!.topic.name} change`;
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
    await this.turn;
    // Hand the lease on at once instead of making another process wait for it to expire.
    if (this.leaseUntil > 0) {
      this.leaseUntil = 0;
      await this.knex.withSchema(this.schema).table('outbox_relay_lease').where({ id: 1, holder: this.holder }).delete().catch(() => undefined);
    }
  }

  /** Rows quarantined by this relay since it was made. */
  get quarantined(): number {
    return this.quarantinedTotal;
  }

  /** Publishes what is waiting now; resolves when the outbox was drained once. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.exclusive(() => this.drain()).finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.kick();
      }
    });
    return this.running;
  }

  /**
   * Resolves once every row enqueued so far that can be published has been (tests, graceful
   * shutdown, the CLI): rows held behind a quarantined row of their key stay. Rejects with the
   * transport's error when a row cannot be published now; waits while another process's relay
   * holds the lease (that relay publishes the rows).
   */
  async flush(): Promise<void> {
    let waitedElsewhere: number | undefined;
    for (;;) {
      const o = await this.exclusive(() => this.pass({ ignoreBackoff: true }));
      if (o.error && o.published === 0) throw o.error;
      if (o.elsewhere) {
        if ((await this.publishable()) === 0) return;
        waitedElsewhere ??= Date.now();
        if (Date.now() - waitedElsewhere > 3 * this.leaseMs) throw new Error(`another process's relay holds the outbox lease of ${this.schema} and has not published its rows`);
        await new Promise((r) => setTimeout(r, Math.min(this.pollMs, 200)));
        continue;
      }
      if (o.selected === 0) return;
    }
  }

  /** One pass at a time per relay, whoever asks (the timer, a commit, flush). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.turn.then(fn, fn);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async drain(): Promise<void> {
    while (!this.stopped && Date.now() >= this.pausedUntil) {
      let o: PassOutcome;
      try {
        o = await this.pass();
      } catch (err) {
        // The database itself failed (or the relay tables are missing): same backoff as an outage.
        this.outage(err as Error);
        return;
      }
      if (o.published > 0) this.recovered();
      else if (o.failed > 0 && o.error && this.isOutage(o)) this.outage(o.error);
      if (o.elsewhere || o.selected < this.batchSize || o.published + o.quarantined === 0) return;
    }
  }

  /** Nothing went through while rows of at least two keys failed: the transport, not a row, is the problem. */
  private isOutage(o: PassOutcome & { failedKeys?: number }): boolean {
    return (o.failedKeys ?? 0) >= 2;
  }

  private async pass(opts: { ignoreBackoff?: boolean } = {}): Promise<PassOutcome & { failedKeys?: number }> {
    const outcome: PassOutcome & { failedKeys?: number } = { selected: 0, published: 0, failed: 0, quarantined: 0 };
    if (!(await this.holdLease())) return { ...outcome, elsewhere: true };
    const now = Date.now();
    const waiting = opts.ignoreBackoff ? [] : [...this.failing.values()].filter((f) => f.nextAt > now);
    const q = this.knex
      .withSchema(this.schema)
      .table('outbox as o')
      .whereNotExists(this.knex.withSchema(this.schema).table('outbox_quarantine as q').whereRaw('q.topic = o.topic and q.key = o.key').whereNull('q.discarded_at'))
      .orderBy('o.seq')
      .limit(this.batchSize)
      .select('o.*');
    // A key whose head row waits for its retry holds its later rows; every other key goes on.
    if (waiting.length > 0) q.whereNotIn(['o.topic', 'o.key'], waiting.map((f) => [f.topic, f.key]));
    const rows = (await q) as OutboxRow[];
    outcome.selected = rows.length;
    if (rows.length === 0) return outcome;

    const held = new Set<string>();
    const ready: { row: OutboxRow; topic: Topic; value: unknown; headers: Record<string, string> }[] = [];
    for (const row of rows) {
      const k = keyOf(row.topic, row.key);
      if (held.has(k)) continue;
      const prepared = this.prepare(row);
      if ('problem' in prepared) {
        await this.quarantine(row, prepared.problem, 0);
        outcome.quarantined++;
        held.add(k);
        continue;
      }
      ready.push({ row, ...prepared });
    }

    const publish = (r: (typeof ready)[number]) => this.publisher.publish(r.topic, r.row.key, r.value as TopicValue<Topic>, { messageId: r.row.id, headers: r.headers });
    // Handed over in order and awaited together: the transport keeps the order of what it is
    // given (Kafka: one producer queue, sent as one batch), so a burst costs one broker round trip.
    const results = await Promise.allSettled(ready.map(publish));
    const ok = new Set<string>();
    let failed = ready.filter((r, i) => {
      const res = results[i]!;
      if (res.status === 'fulfilled') ok.add(r.row.id);
      return res.status === 'rejected';
    });
    let errors = new Map(failed.map((r) => [r.row.id, (results[ready.indexOf(r)] as PromiseRejectedResult).reason as Error]));
    if (failed.length > 0 && ready.length > 1) {
      // A batch fails as a whole (Kafka): find which rows fail on their own, one at a time in order.
      const alone: typeof failed = [];
      const aloneErrors = new Map<string, Error>();
      const failedKeys = new Set<string>();
      for (const r of failed) {
        const k = keyOf(r.row.topic, r.row.key);
        if (failedKeys.has(k)) {
          alone.push(r);
          aloneErrors.set(r.row.id, errors.get(r.row.id)!);
          continue;
        }
        try {
          await publish(r);
          ok.add(r.row.id);
        } catch (err) {
          alone.push(r);
          aloneErrors.set(r.row.id, err as Error);
          failedKeys.add(k);
          // Two keys failing with nothing through: an outage; the rest would fail alike.
          if (ok.size === 0 && failedKeys.size >= 2) {
            for (const rest of failed.slice(failed.indexOf(r) + 1)) {
              alone.push(rest);
              aloneErrors.set(rest.row.id, errors.get(rest.row.id)!);
            }
            break;
          }
        }
      }
      failed = alone;
      errors = aloneErrors;
    }

    // A later row of a key published ahead of its failed earlier row goes again after it, so the
    // last thing consumers see of the key is in order.
    const firstFailedSeq = new Map<string, bigint>();
    for (const r of failed) {
      const k = keyOf(r.row.topic, r.row.key);
      const seq = BigInt(r.row.seq);
      if (!firstFailedSeq.has(k) || seq < firstFailedSeq.get(k)!) firstFailedSeq.set(k, seq);
    }
    const done = ready.filter((r) => {
      if (!ok.has(r.row.id)) return false;
      const blockedFrom = firstFailedSeq.get(keyOf(r.row.topic, r.row.key));
      return blockedFrom === undefined || BigInt(r.row.seq) < blockedFrom;
    });
    if (done.length > 0) {
      await this.knex.withSchema(this.schema).table('outbox').whereIn('id', done.map((r) => r.row.id)).delete();
      for (const r of done) this.failing.delete(r.row.id);
    }
    outcome.published = ok.size;
    if (ok.size > 0) this.lastSuccessAt = Date.now();

    outcome.failed = failed.length;
    outcome.failedKeys = firstFailedSeq.size;
    outcome.error = failed.length > 0 ? errors.get(failed[0]!.row.id) : undefined;
    // An outage is the relay's to wait out (drain pauses); no row is blamed for it.
    if (this.isOutage(outcome) && ok.size === 0) return outcome;
    for (const r of failed) {
      // Only the head row of its key counts: the rows behind it failed with it, not for themselves.
      if (BigInt(r.row.seq) !== firstFailedSeq.get(keyOf(r.row.topic, r.row.key))) continue;
      if (await this.failed(r.row, errors.get(r.row.id)!, ok.size > 0)) outcome.quarantined++;
    }
    return outcome;
  }

  /** The row's topic, value and headers, or why the topic's Avro schema (or this outbox) cannot carry it. */
  private prepare(row: OutboxRow): { topic: Topic; value: unknown; headers: Record<string, string> } | { problem: string } {
    const known = this.topics.get(row.topic);
    if (!known) return { problem: `topic ${row.topic} is not one this outbox publishes to` };
    let value: unknown;
    let headers: Record<string, string>;
    try {
      value = typeof row.value === 'string' ? JSON.parse(row.value) : row.value;
      headers = (typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers) ?? {};
    } catch {
      return { problem: 'the stored value is not JSON' };
    }
    const wrong: string[] = [];
    const valid = known.type.isValid(value, {
      errorHook: (path: string[], _v: unknown, type: avro.Type) => void wrong.push(`${path.join('.') || 'the value'} is not a valid ${type.branchName ?? type.typeName}`),
    });
    if (!valid) return { problem: `the value does not fit the Avro schema of ${row.topic}: ${wrong.slice(0, 5).join('; ')}` };
    return { topic: known.topic, value, headers };
  }

  /**
   * Records a failure of the head row of its key; answers whether it was quarantined. A failure
   * counts against the row when other rows got through meanwhile (so the transport works).
   */
  private async failed(row: OutboxRow, err: Error, othersWentThrough: boolean): Promise<boolean> {
    const now = Date.now();
    const f = this.failing.get(row.id) ?? { topic: row.topic, key: row.key, counted: 0, failures: 0, lastFailureAt: 0, nextAt: 0, error: '' };
    if (othersWentThrough || (f.failures > 0 && this.lastSuccessAt > f.lastFailureAt)) f.counted++;
    f.failures++;
    f.lastFailureAt = now;
    f.nextAt = now + Math.min(this.maxBackoffMs, this.retryBaseMs * 2 ** (f.failures - 1));
    f.error = `${err.name}: ${err.message}`;
    this.failing.set(row.id, f);
    if (f.counted >= this.maxAttempts) {
      this.failing.delete(row.id);
      await this.quarantine(row, `publishing failed ${f.failures} times while other rows went through; last error: ${f.error}`, f.failures);
      return true;
    }
    if (f.failures === 1) {
      this.logger.warn({ topic: row.topic, key: row.key, message_id: row.id, err }, 'outbox row refused by the transport; retrying it alone with backoff, its key waits');
    }
    return false;
  }

  private async quarantine(row: OutboxRow, reason: string, attempts: number): Promise<void> {
    await quarantineRow(this.knex, this.schema, row, reason, attempts);
    this.quarantinedTotal++;
    quarantinedCounter.add(1, { 'efs.schema': this.schema, 'messaging.destination.name': row.topic });
    this.logger.error(
      { topic: row.topic, key: row.key, message_id: row.id, reason, quarantined_total: this.quarantinedTotal },
      'outbox row quarantined: it cannot be published; later rows of its key wait until it is retried or discarded (efs outbox)',
    );
  }

  /** The relay cannot publish anything: pause with backoff, and say so once (then once a minute). */
  private outage(err: Error): void {
    const now = Date.now();
    this.pausedUntil = now + Math.min(this.maxBackoffMs, this.retryBaseMs * 2 ** this.pauseStep);
    this.pauseStep++;
    if (this.outageSince === undefined) {
      this.outageSince = now;
      this.outageLoggedAt = now;
      this.logger.warn({ err, retry_in_ms: this.pausedUntil - now }, 'outbox relay cannot publish; pausing and retrying with backoff');
      // The poll timer kicks the relay again once the pause is over.
    } else if (now - this.outageLoggedAt >= 60_000) {
      this.outageLoggedAt = now;
      this.logger.warn({ err, since: new Date(this.outageSince).toISOString(), attempts: this.pauseStep }, 'outbox relay still cannot publish');
    }
  }

  private recovered(): void {
    if (this.outageSince !== undefined) this.logger.info({ after_ms: Date.now() - this.outageSince }, 'outbox relay publishing again');
    this.outageSince = undefined;
    this.pauseStep = 0;
    this.pausedUntil = 0;
  }

  /** Takes or renews the schema's relay lease (renewed at half its life); false while another process holds it. */
  private async holdLease(): Promise<boolean> {
    if (this.leaseUntil - Date.now() > this.leaseMs / 2) return true;
    const result = (await this.knex.raw(
      `insert into ??.outbox_relay_lease as l (id, holder, expires_at) values (1, ?, now() + make_interval(secs => ?))
       on conflict (id) do update set holder = excluded.holder, expires_at = excluded.expires_at
       where l.holder = excluded.holder or l.expires_at < now()
       returning holder`,
      [this.schema, this.holder, this.leaseMs / 1000],
    )) as { rows: unknown[] };
    const held = result.rows.length > 0;
    this.leaseUntil = held ? Date.now() + this.leaseMs : 0;
    return held;
  }

  /** Rows that are not held behind a quarantined row. */
  private async publishable(): Promise<number> {
    const [{ count }] = (await this.knex
      .withSchema(this.schema)
      .table('outbox as o')
      .whereNotExists(this.knex.withSchema(this.schema).table('outbox_quarantine as q').whereRaw('q.topic = o.topic and q.key = o.key').whereNull('q.discarded_at'))
      .count({ count: '*' })) as [{ count: string | number }];
    return Number(count);
  }
}
