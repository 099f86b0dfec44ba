import type { Knex } from 'knex';
import { outsideRequest, type Topic, type TopicValue } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { OutagePause, RowBackoff, type BackoffOptions } from './backoff.ts';
import { RelayLease } from './lease.ts';
import { quarantineRow, type OutboxRow } from './quarantine.ts';
import { RowCheck, type CheckedRow } from './rowCheck.ts';

/**
 * What the outbox needs of a transport: publishing with a chosen message id. The promise
 * resolves once the message is durable elsewhere (Kafka: acknowledged by the brokers; in-process:
 * handled by every consumer), which is when the relay deletes its row.
 */
export interface Publisher {
  publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options?: { messageId?: string; headers?: Record<string, string> }): Promise<void>;
}

interface RelayOptions extends BackoffOptions {
  knex: Knex;
  schema: string;
  publisher: Publisher;
  logger: Logger;
  topics: readonly Topic[];
  pollMs: number;
  batchSize: number;
  leaseMs: number;
}

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

const keyOf = (topic: string, key: string) => `${topic}\u0000${key}`;

/**
 * The relay of a schema's outbox: publishes rows in order and deletes each once the transport
 * has it durably (see `Outbox` for what it keeps: order per key, quarantine, backoff, the lease).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private turn: Promise<unknown> = Promise.resolve();
  private lastSuccessAt = 0;
  private quarantinedTotal = 0;

  private readonly knex: Knex;
  private readonly schema: string;
  private readonly publisher: Publisher;
  private readonly logger: Logger;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly check: RowCheck;
  private readonly backoff: RowBackoff;
  private readonly pause: OutagePause;
  private readonly lease: RelayLease;

  constructor(opts: RelayOptions) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.publisher = opts.publisher;
    this.logger = opts.logger;
    this.pollMs = opts.pollMs;
    this.batchSize = opts.batchSize;
    this.leaseMs = opts.leaseMs;
    this.check = new RowCheck(opts.topics);
    this.backoff = new RowBackoff(opts);
    this.pause = new OutagePause(opts, opts.logger);
    this.lease = new RelayLease(opts.knex, opts.schema, opts.leaseMs);
  }

  /** See `Outbox.published`. */
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
    await this.lease.release();
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

  /** See `Outbox.flush`. */
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
    while (!this.stopped && !this.pause.paused(Date.now())) {
      let o: PassOutcome;
      try {
        o = await this.pass();
      } catch (err) {
        // The database itself failed (or the relay tables are missing): same backoff as an outage.
        this.pause.outage(err as Error);
        return;
      }
      if (o.published > 0) this.pause.recovered();
      else if (o.failed > 0 && o.error && this.isOutage(o)) this.pause.outage(o.error);
      if (o.elsewhere || o.selected < this.batchSize || o.published + o.quarantined === 0) return;
    }
  }

  /** Nothing went through while rows of at least two keys failed: the transport, not a row, is the problem. */
  private isOutage(o: PassOutcome & { failedKeys?: number }): boolean {
    return (o.failedKeys ?? 0) >= 2;
  }

  private async pass(opts: { ignoreBackoff?: boolean } = {}): Promise<PassOutcome & { failedKeys?: number }> {
    const outcome: PassOutcome & { failedKeys?: number } = { selected: 0, published: 0, failed: 0, quarantined: 0 };
    if (!(await this.lease.hold())) return { ...outcome, elsewhere: true };
    const now = Date.now();
    const waiting = opts.ignoreBackoff ? [] : this.backoff.waiting(now);
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
    const ready: ({ row: OutboxRow } & CheckedRow)[] = [];
    for (const row of rows) {
      const k = keyOf(row.topic, row.key);
      if (held.has(k)) continue;
      const prepared = this.check.prepare(row);
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
      for (const r of done) this.backoff.published(r.row.id);
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

  /** Records a failure of the head row of its key (see `RowBackoff.failed`); answers whether it was quarantined. */
  private async failed(row: OutboxRow, err: Error, othersWentThrough: boolean): Promise<boolean> {
    const f = this.backoff.failed(row, err, othersWentThrough, this.lastSuccessAt);
    if (f.quarantine !== undefined) {
      await this.quarantine(row, f.quarantine, f.attempts);
      return true;
    }
    if (f.first) {
      this.logger.warn({ topic: row.topic, key: row.key, message_id: row.id, err }, 'outbox row refused by the transport; retrying it alone with backoff, its key waits');
    }
    return false;
  }

  private async quarantine(row: OutboxRow, reason: string, attempts: number): Promise<void> {
    await quarantineRow(this.knex, this.schema, row, reason, attempts);
    this.quarantinedTotal++;
    this.logger.error(
      { topic: row.topic, key: row.key, message_id: row.id, reason, quarantined_total: this.quarantinedTotal },
      'outbox row quarantined: it cannot be published; later rows of its key wait until it is retried or discarded (efs outbox)',
    );
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
