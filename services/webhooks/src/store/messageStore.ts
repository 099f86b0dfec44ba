import type { NotificationType, WebhookEventTypeName } from '@efs/api';
import type { Knex } from '@efs/db';
import type { Clock } from '@efs/runtime';
import type { NewMessage, Tenant } from '../domain/messages.ts';

/** One lock for every writer of messages: their sequence numbers then commit in order, so a feed reader never skips one. */
const MESSAGES_LOCK = 0x77686b73; // "whks"

interface MessageRow {
  seq: string;
  id: string;
  event_type: WebhookEventTypeName;
  body: string;
}

/**
 * The messages, stored once each (a redelivered record yields the same webhook-id and adds
 * nothing), and their fan-out into deliveries to the tenant's enabled subscriptions whose
 * `event_types` take them.
 */
export class KnexMessageStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  /**
   * Takes the writers' lock for the rest of `trx`; call it before the transaction reads what
   * decides the messages, so that concurrent consumers decide one after the other.
   */
  async lock(trx: Knex.Transaction): Promise<void> {
    await trx.raw('select pg_advisory_xact_lock(?::bigint)', [MESSAGES_LOCK]);
  }

  /**
   * One consumed batch: under the writers' lock, `build` reads the read models and answers the
   * messages, which are stored with their deliveries in the same transaction.
   */
  async write(knex: Knex, build: (trx: Knex.Transaction) => Promise<readonly NewMessage[]>, now: Clock): Promise<number> {
    return knex.transaction(async (trx) => {
      await this.lock(trx);
      const messages = await build(trx);
      return this.add(trx, messages, now());
    });
  }

  /** Stores the new ones among `messages` and queues a delivery per matching subscription; answers how many deliveries were queued. */
  async add(trx: Knex.Transaction, messages: readonly NewMessage[], now: Date): Promise<number> {
    if (messages.length === 0) return 0;
    const { rows } = await trx.raw<{ rows: { count: string }[] }>(
      `with input as (
         select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[]) with ordinality
           as m(id, tenant_kind, tenant_id, event_type, resource_key, body, created_at, n)
       ),
       added as (
         insert into ??.messages (id, tenant_kind, tenant_id, event_type, resource_key, body, created_at)
         select id, tenant_kind, tenant_id, event_type, resource_key, body, created_at from input order by n
         on conflict (id) do nothing
         returning seq, tenant_kind, tenant_id, event_type, resource_key
       ),
       queued as (
         insert into ??.deliveries (id, subscription_id, message_seq, resource_key, status, attempt_count, next_attempt_at, created_at, updated_at)
         select gen_random_uuid(), s.id, a.seq, a.resource_key, 'pending', 0, ?::timestamptz, ?::timestamptz, ?::timestamptz
         from added a
         join ??.subscriptions s on s.tenant_kind = a.tenant_kind and s.tenant_id = a.tenant_id and s.enabled
           and (cardinality(s.event_types) = 0 or a.event_type = any(s.event_types))
         order by a.seq
         returning 1
       )
       select count(*) from queued`,
      [
        messages.map((m) => m.id),
        messages.map((m) => m.tenant.kind),
        messages.map((m) => m.tenant.id),
        messages.map((m) => m.eventType),
        messages.map((m) => m.resourceKey),
        messages.map((m) => m.body),
        messages.map((m) => m.createdAt.toISOString()),
        this.schema,
        this.schema,
        now.toISOString(),
        now.toISOString(),
        now.toISOString(),
        this.schema,
      ],
    );
    return Number(rows[0]?.count ?? 0);
  }

  /**
   * Removes up to `limit` of the messages stored before `before` none of whose deliveries is
   * still open (pending or being sent), with their deliveries and, by cascade, their attempts;
   * answers how many it looked at and how many went. Messages a concurrent sweep holds are
   * skipped, and a message that got an open delivery meanwhile (a replay) is kept with it.
   */
  async removeOlderThan(knex: Knex, before: Date, limit: number): Promise<{ examined: number; removed: number }> {
    return knex.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: { seq: string }[] }>(
        `select m.seq from ??.messages m
         where m.stored_at < ?::timestamptz
           and not exists (select 1 from ??.deliveries d where d.message_seq = m.seq and d.status in ('pending','sending'))
         order by m.stored_at limit ? for update of m skip locked`,
        [this.schema, before.toISOString(), this.schema, limit],
      );
      if (rows.length === 0) return { examined: 0, removed: 0 };
      const seqs = rows.map((r) => r.seq);
      await trx.raw(`delete from ??.deliveries where message_seq = any(?::bigint[]) and status in ('succeeded','failed')`, [this.schema, seqs]);
      const { rows: gone } = await trx.raw<{ rows: unknown[] }>(
        `delete from ??.messages m where m.seq = any(?::bigint[])
           and not exists (select 1 from ??.deliveries d where d.message_seq = m.seq) returning 1`,
        [this.schema, seqs, this.schema],
      );
      return { examined: rows.length, removed: gone.length };
    });
  }

  /** The tenant's messages after the cursor, oldest first: the polling feed. */
  async feed(knex: Knex, tenant: Tenant, after: string | undefined, limit: number): Promise<NotificationType[]> {
    const rows = (await knex
      .withSchema(this.schema)
      .table('messages')
      .where({ tenant_kind: tenant.kind, tenant_id: tenant.id })
      .andWhere('seq', '>', after ?? '0')
      .orderBy('seq')
      .limit(limit)
      .select('seq', 'id', 'event_type', 'body')) as MessageRow[];
    return rows.map((r) => {
      const body = JSON.parse(r.body) as { event_object: Record<string, unknown>; timestamp: string };
      return { webhook_id: r.id, cursor: String(r.seq), event_type: r.event_type, event_object: body.event_object, timestamp: body.timestamp };
    });
  }
}
