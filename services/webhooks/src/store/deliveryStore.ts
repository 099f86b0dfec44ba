import type { DeliveryStatusType, DeliveryType, WebhookEventTypeName } from '@efs/api';
import { boundedRead, type Knex } from '@efs/db';
import type { SubscriptionRow } from './subscriptionStore.ts';

/** A delivery taken from the queue to be sent now, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  subscription_id: string;
  attempt_count: number;
  message_id: string;
  body: string;
  url: string;
  secret: SubscriptionRow['secret'];
  previous_secret: SubscriptionRow['previous_secret'];
  previous_secret_until: SubscriptionRow['previous_secret_until'];
}

/** How one attempt went, and what follows for its delivery. */
export interface AttemptResult {
  deliveryId: string;
  subscriptionId: string;
  attemptedAt: Date;
  durationMs: number;
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  /** succeeded, or failed (given up), or pending again until `nextAttemptAt`. */
  status: 'succeeded' | 'failed' | 'pending';
  nextAttemptAt: Date | null;
  /** The endpoint asked to be disabled (410 Gone). */
  gone: boolean;
}

interface DeliveryRow {
  id: string;
  status: 'pending' | 'sending' | 'succeeded' | 'failed';
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  message_id: string;
  event_type: WebhookEventTypeName;
}

interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  succeeded: boolean;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

const iso = (d: Date | string) => new Date(d).toISOString();

/** How far into each endpoint's open queue a claim looks for what is due. */
const QUEUE_WINDOW = 1000;

/** An open delivery at the head of its endpoint's queue. */
export interface QueueRow {
  id: string;
  subscription_id: string;
  resource_key: string;
  status: 'pending' | 'sending';
  next_attempt_at: Date | null;
  lease_until: Date | null;
}

/**
 * Which of the queue heads (each endpoint's open deliveries in message order) to send now: due
 * (pending and its time has come, or sending under a lease that ran out), and no earlier open
 * delivery about the same resource for the same endpoint (order per resource); at most
 * `perEndpoint` per endpoint and `total` in all.
 */
export function pickDue(rows: readonly QueueRow[], now: number, perEndpoint: number, total: number): string[] {
  const picked: string[] = [];
  const seen = new Set<string>();
  const perSub = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.subscription_id}\n${r.resource_key}`;
    const earlierOpen = seen.has(key);
    seen.add(key);
    if (earlierOpen || picked.length >= total || (perSub.get(r.subscription_id) ?? 0) >= perEndpoint) continue;
    const due = r.status === 'pending' ? r.next_attempt_at !== null && new Date(r.next_attempt_at).getTime() <= now : r.lease_until !== null && new Date(r.lease_until).getTime() < now;
    if (!due) continue;
    picked.push(r.id);
    perSub.set(r.subscription_id, (perSub.get(r.subscription_id) ?? 0) + 1);
  }
  return picked;
}

/**
 * When the first of the queue heads not due at `now` becomes due (epoch ms): a pending delivery at
 * its next attempt, a sending one once its lease has run out; null when none will by time alone.
 * An early answer is harmless (the worker claims and finds nothing yet), a late one delays a retry.
 */
export function nextDueAfter(rows: readonly QueueRow[], now: number): number | null {
  let next: number | null = null;
  for (const r of rows) {
    const at = r.status === 'pending' ? (r.next_attempt_at === null ? null : new Date(r.next_attempt_at).getTime()) : r.lease_until === null ? null : new Date(r.lease_until).getTime() + 1;
    if (at !== null && at > now && (next === null || at < next)) next = at;
  }
  return next;
}
const OPEN = `('pending','sending')`;

/**
 * The deliveries: a durable queue per endpoint. A claim reads the head of each endpoint's open
 * queue, picks what is due (pickDue: a bounded number per endpoint, and a delivery only when no
 * earlier message about the same resource is still open for that endpoint), and takes those rows
 * with FOR UPDATE SKIP LOCKED, rechecking that they are still due, so concurrent workers never
 * take one twice. A claim is a lease: a worker that dies leaves rows that another claims once
 * the lease has run out.
 */
export class KnexDeliveryStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  /** Claims what is due now (see the class); answers it and when the next head it saw becomes due (`nextDueAfter`). */
  async claim(knex: Knex, opts: { now: Date; leaseMs: number; perEndpoint: number; total: number; skipEndpoints: readonly string[] }): Promise<{ claimed: ClaimedDelivery[]; nextDueAt: number | null }> {
    if (opts.total <= 0) return { claimed: [], nextDueAt: null };
    const s = this.schema;
    const now = opts.now.getTime();
    // The head of each enabled endpoint's open queue, in message order. Simple index scans only
    // (no self-join the planner could turn quadratic on a table that grew faster than its statistics).
    const { rows: heads } = await knex.raw<{ rows: QueueRow[] }>(
      `select x.* from ??.subscriptions s
       cross join lateral (
         select d.id, d.subscription_id, d.resource_key, d.status, d.next_attempt_at, d.lease_until from ??.deliveries d
         where d.subscription_id = s.id and d.status in ${OPEN}
         order by d.message_seq
         limit ?
       ) x
       where s.enabled and not (s.id = any(?::uuid[]))`,
      [s, s, QUEUE_WINDOW, [...opts.skipEndpoints]],
    );
    const picked = pickDue(heads, now, opts.perEndpoint, opts.total);
    const nextDueAt = nextDueAfter(heads, now);
    if (picked.length === 0) return { claimed: [], nextDueAt };
    const lease = iso(new Date(now + opts.leaseMs));
    const { rows: claimed } = await knex.raw<{ rows: { id: string; subscription_id: string; attempt_count: number; message_seq: string }[] }>(
      `with c as (
         select id from ??.deliveries
         where id = any(?::uuid[]) and ((status = 'pending' and next_attempt_at <= ?::timestamptz) or (status = 'sending' and lease_until < ?::timestamptz))
         for update skip locked
       )
       update ??.deliveries d set status = 'sending', lease_until = ?::timestamptz, updated_at = ?::timestamptz
       where d.id = any(?::uuid[]) and d.id in (select id from c)
       returning d.id, d.subscription_id, d.attempt_count, d.message_seq`,
      [s, picked, iso(opts.now), iso(opts.now), s, lease, iso(opts.now), picked],
    );
    if (claimed.length === 0) return { claimed: [], nextDueAt };
    const messages = new Map(
      ((await knex.withSchema(s).table('messages').whereIn('seq', [...new Set(claimed.map((c) => c.message_seq))]).select('seq', 'id', 'body')) as { seq: string; id: string; body: string }[]).map((m) => [String(m.seq), m]),
    );
    const subs = new Map(
      ((await knex.withSchema(s).table('subscriptions').whereIn('id', [...new Set(claimed.map((c) => c.subscription_id))]).select('id', 'url', 'secret', 'previous_secret', 'previous_secret_until')) as Pick<SubscriptionRow, 'id' | 'url' | 'secret' | 'previous_secret' | 'previous_secret_until'>[]).map((x) => [x.id, x]),
    );
    const deliveries = claimed.flatMap((c) => {
      const m = messages.get(String(c.message_seq));
      const sub = subs.get(c.subscription_id);
      if (!m || !sub) return [];
      return [{ id: c.id, subscription_id: c.subscription_id, attempt_count: c.attempt_count, message_id: m.id, body: m.body, url: sub.url, secret: sub.secret, previous_secret: sub.previous_secret, previous_secret_until: sub.previous_secret_until }];
    });
    return { claimed: deliveries, nextDueAt };
  }

  /**
   * Records attempts and their deliveries' next state in one transaction, and what they say of
   * each endpoint: a success ends its failing streak; a failure starts one (or continues it), and
   * a streak older than `disableAfterMs`, or a 410, disables the endpoint. Answers the endpoints
   * disabled, with why (`gone`: by a 410).
   */
  async record(knex: Knex, results: readonly AttemptResult[], now: Date, disableAfterMs: number): Promise<{ id: string; reason: string; gone: boolean }[]> {
    if (results.length === 0) return [];
    const s = this.schema;
    return knex.transaction(async (trx) => {
      await trx.raw(
        `with r as (
           select * from unnest(?::uuid[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::boolean[], ?::int[], ?::text[], ?::int[])
             as r(id, status, next_at, attempted_at, succeeded, response_status, error, duration_ms)
         ),
         upd as (
           update ??.deliveries d set status = r.status, next_attempt_at = r.next_at, lease_until = null, attempt_count = d.attempt_count + 1, updated_at = ?::timestamptz
           from r where d.id = any(?::uuid[]) and d.id = r.id and d.status = 'sending'
           returning d.id
         )
         insert into ??.delivery_attempts (delivery_id, attempted_at, succeeded, response_status, error, duration_ms)
         select r.id, r.attempted_at, r.succeeded, r.response_status, r.error, r.duration_ms from r join upd on upd.id = r.id`,
        [
          results.map((r) => r.deliveryId),
          results.map((r) => r.status),
          results.map((r) => (r.nextAttemptAt ? iso(r.nextAttemptAt) : null)),
          results.map((r) => iso(r.attemptedAt)),
          results.map((r) => r.succeeded),
          results.map((r) => r.responseStatus),
          results.map((r) => r.error),
          results.map((r) => r.durationMs),
          s,
          iso(now),
          results.map((r) => r.deliveryId),
          s,
        ] as Knex.RawBinding[],
      );
      const succeeded = [...new Set(results.filter((r) => r.succeeded).map((r) => r.subscriptionId))];
      const failed = [...new Set(results.filter((r) => !r.succeeded && !succeeded.includes(r.subscriptionId)).map((r) => r.subscriptionId))];
      const gone = [...new Set(results.filter((r) => r.gone).map((r) => r.subscriptionId))];
      if (succeeded.length) await trx.raw(`update ??.subscriptions set failing_since = null where id = any(?::uuid[]) and failing_since is not null`, [s, succeeded]);
      const disabled: { id: string; reason: string; gone: boolean }[] = [];
      if (failed.length) {
        const firstFailure = new Map<string, Date>();
        for (const r of results) if (failed.includes(r.subscriptionId) && !(firstFailure.get(r.subscriptionId)! <= r.attemptedAt)) firstFailure.set(r.subscriptionId, r.attemptedAt);
        await trx.raw(
          `update ??.subscriptions s set failing_since = coalesce(s.failing_since, f.at) from unnest(?::uuid[], ?::timestamptz[]) as f(id, at) where s.id = f.id`,
          [s, [...firstFailure.keys()], [...firstFailure.values()].map(iso)],
        );
        const reason = `failing without a success for ${Math.round(disableAfterMs / 1000)} s`;
        const { rows } = await trx.raw<{ rows: { id: string }[] }>(
          `update ??.subscriptions set enabled = false, disabled_reason = ?, updated_at = ?::timestamptz
           where id = any(?::uuid[]) and enabled and failing_since <= ?::timestamptz returning id`,
          [s, reason, iso(now), failed, iso(new Date(now.getTime() - disableAfterMs))],
        );
        disabled.push(...rows.map((r) => ({ id: r.id, reason, gone: false })));
      }
      if (gone.length) {
        const reason = 'the endpoint answered 410 Gone';
        const { rows } = await trx.raw<{ rows: { id: string }[] }>(
          `update ??.subscriptions set enabled = false, disabled_reason = ?, updated_at = ?::timestamptz where id = any(?::uuid[]) and enabled returning id`,
          [s, reason, iso(now), gone],
        );
        disabled.push(...rows.map((r) => ({ id: r.id, reason, gone: true })));
      }
      return disabled;
    });
  }

  /** A subscription's deliveries, oldest first, each with its attempts. */
  async list(knex: Knex, subscriptionId: string, status: DeliveryStatusType | undefined, skip: number, limit: number): Promise<DeliveryType[]> {
    const q = this.rows(knex).where('d.subscription_id', subscriptionId);
    if (status === 'pending') q.whereIn('d.status', ['pending', 'sending']);
    else if (status) q.where('d.status', status);
    const rows = (await q.orderBy([{ column: 'd.created_at' }, { column: 'd.message_seq' }, { column: 'd.id' }]).offset(skip).limit(limit)) as DeliveryRow[];
    return this.withAttempts(knex, rows);
  }

  async get(knex: Knex, subscriptionId: string, id: string): Promise<DeliveryType | null> {
    const row = (await this.rows(knex).where({ 'd.subscription_id': subscriptionId, 'd.id': id }).first()) as DeliveryRow | undefined;
    return row ? (await this.withAttempts(knex, [row]))[0]! : null;
  }

  /** Sends a delivery's message again, as a new delivery (same webhook-id), due now. */
  async replayOne(knex: Knex, subscriptionId: string, id: string, now: Date): Promise<string | null> {
    const { rows } = await knex.raw<{ rows: { id: string }[] }>(
      `insert into ??.deliveries (id, subscription_id, message_seq, resource_key, status, attempt_count, next_attempt_at, created_at, updated_at)
       select gen_random_uuid(), d.subscription_id, d.message_seq, d.resource_key, 'pending', 0, ?::timestamptz, ?::timestamptz, ?::timestamptz
       from ??.deliveries d where d.subscription_id = ? and d.id = ?
       returning id`,
      [this.schema, iso(now), iso(now), iso(now), this.schema, subscriptionId, id],
    );
    return rows[0]?.id ?? null;
  }

  /** Sends again every message whose delivery to the endpoint failed (was given up) since `since`, unless it is queued again or got through since. */
  async replayFailedSince(knex: Knex, subscriptionId: string, since: Date, now: Date): Promise<number> {
    const s = this.schema;
    const { rows } = await knex.raw<{ rows: { count: string }[] }>(
      `with failed as (
         select distinct on (d.message_seq) d.message_seq, d.resource_key from ??.deliveries d
         where d.subscription_id = ? and d.status = 'failed' and d.updated_at >= ?::timestamptz
           and not exists (select 1 from ??.deliveries o where o.subscription_id = d.subscription_id and o.message_seq = d.message_seq and o.status in ('pending','sending','succeeded'))
         order by d.message_seq
       ),
       queued as (
         insert into ??.deliveries (id, subscription_id, message_seq, resource_key, status, attempt_count, next_attempt_at, created_at, updated_at)
         select gen_random_uuid(), ?::uuid, message_seq, resource_key, 'pending', 0, ?::timestamptz, ?::timestamptz, ?::timestamptz from failed order by message_seq
         returning 1
       )
       select count(*) from queued`,
      [s, subscriptionId, iso(since), s, s, subscriptionId, iso(now), iso(now), iso(now)],
    );
    return Number(rows[0]?.count ?? 0);
  }

  /**
   * The backlog (efs.webhooks.pending): open deliveries of enabled endpoints that are due at `now`
   * (in flight included), and since when the longest-waiting of them has been due. Read at each
   * scrape, so bounded: the open rows' partial index, and at most `timeoutMs` of the database.
   */
  async backlog(knex: Knex, now: Date, timeoutMs: number): Promise<{ pending: number; oldestDueAt: Date | null }> {
    const s = this.schema;
    return boundedRead(knex, timeoutMs, async (trx) => {
      const { rows } = await trx.raw<{ rows: { pending: number; oldest: Date | null }[] }>(
        `select count(*)::int as pending, min(d.next_attempt_at) as oldest
         from ??.deliveries d join ??.subscriptions s on s.id = d.subscription_id
         where d.status in ${OPEN} and d.next_attempt_at <= ?::timestamptz and s.enabled`,
        [s, s, iso(now)],
      );
      const row = rows[0];
      return { pending: row?.pending ?? 0, oldestDueAt: row?.oldest ? new Date(row.oldest) : null };
    });
  }

  /** When the next open delivery of any endpoint is due (the worker sleeps until then at most). */
  async nextDue(knex: Knex): Promise<Date | null> {
    const row = (await knex.withSchema(this.schema).table('deliveries').where('status', 'pending').min({ at: 'next_attempt_at' }).first()) as { at: Date | null } | undefined;
    return row?.at ? new Date(row.at) : null;
  }

  private rows(knex: Knex) {
    return knex
      .from(`${this.schema}.deliveries as d`)
      .join(`${this.schema}.messages as m`, 'm.seq', 'd.message_seq')
      .select('d.id', 'd.status', 'd.next_attempt_at', 'd.created_at', 'd.updated_at', { message_id: 'm.id' }, 'm.event_type');
  }

  private async withAttempts(knex: Knex, rows: DeliveryRow[]): Promise<DeliveryType[]> {
    const attempts = rows.length
      ? ((await knex.withSchema(this.schema).table('delivery_attempts').whereIn('delivery_id', rows.map((r) => r.id)).orderBy('id')) as AttemptRow[])
      : [];
    const byDelivery = Map.groupBy(attempts, (a) => a.delivery_id);
    return rows.map((r) => ({
      id: r.id,
      webhook_id: r.message_id,
      event_type: r.event_type,
      status: r.status === 'sending' ? 'pending' : r.status,
      attempts: (byDelivery.get(r.id) ?? []).map((a) => ({
        attempted_at: iso(a.attempted_at),
        status: a.succeeded ? 'succeeded' : 'failed',
        response_status: a.response_status,
        error: a.error,
        duration_ms: a.duration_ms,
      })),
      next_attempt_at: r.status === 'pending' && r.next_attempt_at ? iso(r.next_attempt_at) : null,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }
}
