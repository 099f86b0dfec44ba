import { randomUUID } from 'node:crypto';
import type { WebhookEventTypeName, WebhookType } from '@efs/api';
import { assertBeforeRequestDeadline } from '@efs/contracts';
import type { KeyEncryption, Knex } from '@efs/db';
import type { Tenant } from '../domain/messages.ts';
import { newSecret, ROTATION_OVERLAP_MS, secretKey } from '../domain/signing.ts';

/** A subscription as stored; its secrets stay sealed until signing opens them. */
export interface SubscriptionRow {
  id: string;
  tenant_kind: Tenant['kind'];
  tenant_id: string;
  url: string;
  event_types: WebhookEventTypeName[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SubscriptionPatch {
  url?: string;
  eventTypes?: WebhookEventTypeName[];
  enabled?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const toApiWebhook = (r: SubscriptionRow): WebhookType => ({
  id: r.id,
  url: r.url,
  event_types: r.event_types,
  description: r.description,
  enabled: r.enabled,
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
});

/**
 * Subscriptions of integrators and utilities. Every read and write names the tenant, so one
 * tenant's id never reaches another's subscription (it reads as not found). Secrets are sealed
 * with the key-encryption key, the row id as associated data.
 */
export class KnexSubscriptionStore {
  private readonly schema: string;
  private readonly encryption: KeyEncryption;

  constructor(schema: string, encryption: KeyEncryption) {
    this.schema = schema;
    this.encryption = encryption;
  }

  private t(knex: Knex) {
    return knex.withSchema(this.schema).table<SubscriptionRow>('subscriptions');
  }

  private own(knex: Knex, tenant: Tenant, id: string) {
    return this.t(knex).where({ id, tenant_kind: tenant.kind, tenant_id: tenant.id });
  }

  private seal(id: string, secret: string): string {
    return this.encryption.seal(Buffer.from(secret, 'utf8'), `webhooks.subscriptions:${id}`);
  }

  async create(knex: Knex, tenant: Tenant, input: { url: string; eventTypes: WebhookEventTypeName[]; description: string | null }, now: Date): Promise<{ row: SubscriptionRow; secret: string }> {
    const id = randomUUID();
    const secret = newSecret();
    // A change the gateway has given up on is not made (its caller was told nothing was done).
    assertBeforeRequestDeadline('the webhook subscription');
    const [row] = await this.t(knex)
      .insert({
        id,
        tenant_kind: tenant.kind,
        tenant_id: tenant.id,
        url: input.url,
        event_types: input.eventTypes,
        description: input.description,
        enabled: true,
        disabled_reason: null,
        secret: this.seal(id, secret),
        previous_secret: null,
        previous_secret_until: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      .returning('*');
    return { row: row as SubscriptionRow, secret };
  }

  async list(knex: Knex, tenant: Tenant, skip: number, limit: number): Promise<SubscriptionRow[]> {
    return (await this.t(knex).where({ tenant_kind: tenant.kind, tenant_id: tenant.id }).orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(skip).limit(limit)) as SubscriptionRow[];
  }

  async get(knex: Knex, tenant: Tenant, id: string): Promise<SubscriptionRow | null> {
    if (!UUID.test(id)) return null;
    return ((await this.own(knex, tenant, id).first()) as SubscriptionRow | undefined) ?? null;
  }

  /** Applies a change; `enabled: true` re-enables (and forgets the failing streak that disabled it). */
  async update(knex: Knex, tenant: Tenant, id: string, patch: SubscriptionPatch, now: Date): Promise<SubscriptionRow | null> {
    if (!UUID.test(id)) return null;
    const changes: Partial<SubscriptionRow> = { updated_at: now };
    if (patch.url !== undefined) changes.url = patch.url;
    if (patch.eventTypes !== undefined) changes.event_types = patch.eventTypes;
    if (patch.enabled === true) Object.assign(changes, { enabled: true, disabled_reason: null, failing_since: null });
    if (patch.enabled === false) Object.assign(changes, { enabled: false, disabled_reason: 'disabled by its owner' });
    assertBeforeRequestDeadline('the webhook change');
    const [row] = await this.own(knex, tenant, id).update(changes).returning('*');
    return (row as SubscriptionRow | undefined) ?? null;
  }

  async delete(knex: Knex, tenant: Tenant, id: string): Promise<SubscriptionRow | null> {
    if (!UUID.test(id)) return null;
    assertBeforeRequestDeadline('the webhook deletion');
    const [row] = await this.own(knex, tenant, id).delete().returning('*');
    return (row as SubscriptionRow | undefined) ?? null;
  }

  /** A new secret; the one it replaces keeps signing beside it for ROTATION_OVERLAP_MS. */
  async rotate(knex: Knex, tenant: Tenant, id: string, now: Date): Promise<{ row: SubscriptionRow; secret: string } | null> {
    if (!UUID.test(id)) return null;
    return knex.transaction(async (trx) => {
      const current = (await this.own(trx, tenant, id).forUpdate().first()) as SubscriptionRow | undefined;
      if (!current) return null;
      const secret = newSecret();
      assertBeforeRequestDeadline('the secret rotation');
      const [row] = await this.own(trx, tenant, id)
        .update({ secret: this.seal(id, secret), previous_secret: current.secret, previous_secret_until: new Date(now.getTime() + ROTATION_OVERLAP_MS), updated_at: now })
        .returning('*');
      return { row: row as SubscriptionRow, secret };
    });
  }

  /** The HMAC keys that sign for a subscription now: its secret, and the one before it during the overlap. */
  signingKeys(row: Pick<SubscriptionRow, 'id' | 'secret' | 'previous_secret' | 'previous_secret_until'>, now: Date): Buffer[] {
    const open = (sealed: string) => secretKey(this.encryption.open(sealed, `webhooks.subscriptions:${row.id}`).toString('utf8'));
    const keys = [open(row.secret)];
    if (row.previous_secret && row.previous_secret_until && new Date(row.previous_secret_until) > now) keys.push(open(row.previous_secret));
    return keys;
  }
}
