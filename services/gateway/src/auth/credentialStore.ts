import { randomUUID } from 'node:crypto';
import { CredentialsTopic, type CredentialMessage } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { hashToken, newToken } from './tokens.ts';

export type CredentialKind = CredentialMessage['kind'];

/** A client token or utility key as replicas know it: never the secret, only its hash. */
export type CredentialRecord = CredentialMessage;

/** Integrators, utilities and their long-lived secrets, kept hashed in the gateway's `auth` schema. */
export interface CredentialStore {
  ensureIntegrator(id: string, name: string): Promise<void>;
  ensureUtility(id: string, name: string): Promise<void>;
  /** Creates a client token; `token` registers a given one (sandbox), otherwise a new one is made. */
  createClientToken(integratorId: string, label: string, token?: string): Promise<{ id: string; token: string; record: CredentialRecord }>;
  revokeClientToken(id: string): Promise<boolean>;
  createUtilityKey(utilityId: string, label: string, key?: string): Promise<{ id: string; token: string; record: CredentialRecord }>;
  revokeUtilityKey(id: string): Promise<boolean>;
  /** Every credential, revoked ones included: what a replica loads at start. */
  listCredentials(): Promise<CredentialRecord[]>;
}

interface Row {
  id: string;
  owner_id: string;
  token_hash: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** Where each kind lives: table, owner column, hash column. */
const Tables = {
  CLIENT_TOKEN: { table: 'client_tokens', owner: 'integrator_id', hash: 'token_hash', tokenKind: 'client' },
  UTILITY_KEY: { table: 'utility_keys', owner: 'utility_id', hash: 'key_hash', tokenKind: 'utility' },
} as const;

/**
 * Every change of a credential commits together with its message on `efs.auth.credentials`
 * (transactional outbox of the auth schema), so every gateway replica learns of it — a revocation
 * within seconds — without looking the token up in the database per request.
 */
export class KnexCredentialStore implements CredentialStore {
  private readonly knex: Knex;
  private readonly schema: string;
  private readonly outbox: Outbox;

  constructor(knex: Knex, schema: string, outbox: Outbox) {
    this.knex = knex;
    this.schema = schema;
    this.outbox = outbox;
  }

  async ensureIntegrator(id: string, name: string): Promise<void> {
    await this.knex.withSchema(this.schema).table('integrators').insert({ id, name }).onConflict('id').ignore();
  }

  async ensureUtility(id: string, name: string): Promise<void> {
    await this.knex.withSchema(this.schema).table('utilities').insert({ id, name }).onConflict('id').ignore();
  }

  createClientToken(integratorId: string, label: string, token = newToken('client')) {
    return this.create('CLIENT_TOKEN', integratorId, label, token);
  }

  createUtilityKey(utilityId: string, label: string, key = newToken('utility')) {
    return this.create('UTILITY_KEY', utilityId, label, key);
  }

  revokeClientToken(id: string): Promise<boolean> {
    return this.revoke('CLIENT_TOKEN', id);
  }

  revokeUtilityKey(id: string): Promise<boolean> {
    return this.revoke('UTILITY_KEY', id);
  }

  async listCredentials(): Promise<CredentialRecord[]> {
    const out: CredentialRecord[] = [];
    for (const kind of ['CLIENT_TOKEN', 'UTILITY_KEY'] as const) {
      const t = Tables[kind];
      const rows = (await this.knex.withSchema(this.schema).table(t.table).select('id', `${t.owner} as owner_id`, `${t.hash} as token_hash`, 'created_at', 'revoked_at')) as Row[];
      out.push(...rows.map((r) => toRecord(kind, r)));
    }
    return out;
  }

  /** Registering a token that exists already (the sandbox token at every start) changes nothing. */
  private async create(kind: CredentialKind, ownerId: string, label: string, token: string): Promise<{ id: string; token: string; record: CredentialRecord }> {
    const t = Tables[kind];
    return this.knex.transaction(async (trx) => {
      const inserted = (await trx
        .withSchema(this.schema)
        .table(t.table)
        .insert({ id: randomUUID(), [t.owner]: ownerId, [t.hash]: hashToken(token), label })
        .onConflict(t.hash)
        .ignore()
        .returning(['id', `${t.owner} as owner_id`, `${t.hash} as token_hash`, 'created_at', 'revoked_at'])) as Row[];
      if (inserted[0]) {
        const record = toRecord(kind, inserted[0]);
        await this.outbox.enqueue(trx, CredentialsTopic, record.id, record);
        return { id: record.id, token, record };
      }
      const existing = (await trx.withSchema(this.schema).table(t.table).where(t.hash, hashToken(token)).first('id', `${t.owner} as owner_id`, `${t.hash} as token_hash`, 'created_at', 'revoked_at')) as Row;
      return { id: existing.id, token, record: toRecord(kind, existing) };
    });
  }

  private async revoke(kind: CredentialKind, id: string): Promise<boolean> {
    const t = Tables[kind];
    if (!/^[0-9a-f-]{36}$/i.test(id)) return false;
    return this.knex.transaction(async (trx) => {
      const rows = (await trx
        .withSchema(this.schema)
        .table(t.table)
        .where({ id })
        .whereNull('revoked_at')
        .update({ revoked_at: trx.fn.now() })
        .returning(['id', `${t.owner} as owner_id`, `${t.hash} as token_hash`, 'created_at', 'revoked_at'])) as Row[];
      if (!rows[0]) return false;
      const record = toRecord(kind, rows[0]);
      await this.outbox.enqueue(trx, CredentialsTopic, record.id, record);
      return true;
    });
  }
}

function toRecord(kind: CredentialKind, r: Row): CredentialRecord {
  return { id: r.id, kind, owner_id: r.owner_id, token_hash: r.token_hash, created_at: iso(r.created_at)!, revoked_at: iso(r.revoked_at) };
}
