import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Knex } from 'knex';

/**
 * The lease on a schema's outbox (`outbox_relay_lease`, one row): processes sharing a schema take
 * turns through it, so one relay at a time publishes and keys keep their order. A crashed holder
 * is replaced once its lease expires.
 */
export class RelayLease {
  private until = 0;
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly knex: Knex;
  private readonly schema: string;
  private readonly ms: number;

  constructor(knex: Knex, schema: string, ms: number) {
    this.knex = knex;
    this.schema = schema;
    this.ms = ms;
  }

  /** Takes or renews the lease (renewed at half its life); false while another process holds it. */
  async hold(): Promise<boolean> {
    if (this.until - Date.now() > this.ms / 2) return true;
    const result = (await this.knex.raw(
      `insert into ??.outbox_relay_lease as l (id, holder, expires_at) values (1, ?, now() + make_interval(secs => ?))
       on conflict (id) do update set holder = excluded.holder, expires_at = excluded.expires_at
       where l.holder = excluded.holder or l.expires_at < now()
       returning holder`,
      [this.schema, this.holder, this.ms / 1000],
    )) as { rows: unknown[] };
    const held = result.rows.length > 0;
    this.until = held ? Date.now() + this.ms : 0;
    return held;
  }

  /** Hands the lease on at once instead of making another process wait for it to expire. */
  async release(): Promise<void> {
    if (this.until > 0) {
      this.until = 0;
      await this.knex.withSchema(this.schema).table('outbox_relay_lease').where({ id: 1, holder: this.holder }).delete().catch(() => undefined);
    }
  }
}
