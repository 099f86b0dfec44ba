import { randomUUID } from 'node:crypto';
import type { Knex } from '@efs/db';
import { hashToken, newToken } from './tokens.ts';

export interface ClientTokenRecord {
  id: string;
  integrator_id: string;
  revoked_at: Date | null;
}

export interface UtilityKeyRecord {
  id: string;
  utility_id: string;
  revoked_at: Date | null;
}

/** Integrators, utilities and their long-lived secrets, kept hashed in the gateway's `auth` schema. */
export interface CredentialStore {
  ensureIntegrator(id: string, name: string): Promise<void>;
  ensureUtility(id: string, name: string): Promise<void>;
  /** Creates a client token; `token` registers a given one (sandbox), otherwise a new one is made. */
  createClientToken(integratorId: string, label: string, token?: string): Promise<{ id: string; token: string }>;
  revokeClientToken(id: string): Promise<boolean>;
  findClientToken(token: string): Promise<ClientTokenRecord | undefined>;
  createUtilityKey(utilityId: string, label: string, key?: string): Promise<{ id: string; token: string }>;
  revokeUtilityKey(id: string): Promise<boolean>;
  findUtilityKey(key: string): Promise<UtilityKeyRecord | undefined>;
}

export class KnexCredentialStore implements CredentialStore {
  private readonly knex: Knex;
  private readonly schema: string;

  constructor(knex: Knex, schema: string) {
    this.knex = knex;
    this.schema = schema;
  }

  private t(table: string) {
    return this.knex.withSchema(this.schema).table(table);
  }

  async ensureIntegrator(id: string, name: string): Promise<void> {
    await this.t('integrators').insert({ id, name }).onConflict('id').ignore();
  }

  async ensureUtility(id: string, name: string): Promise<void> {
    await this.t('utilities').insert({ id, name }).onConflict('id').ignore();
  }

  async createClientToken(integratorId: string, label: string, token = newToken('client')): Promise<{ id: string; token: string }> {
    const id = randomUUID();
    const rows = await this.t('client_tokens').insert({ id, integrator_id: integratorId, token_hash: hashToken(token), label }).onConflict('token_hash').ignore().returning('id');
    if (rows.length === 0) {
      const existing = (await this.t('client_tokens').where({ token_hash: hashToken(token) }).first('id')) as { id: string };
      return { id: existing.id, token };
    }
    return { id, token };
  }

  async revokeClientToken(id: string): Promise<boolean> {
    return (await this.t('client_tokens').where({ id }).whereNull('revoked_at').update({ revoked_at: this.knex.fn.now() })) > 0;
  }

  async findClientToken(token: string): Promise<ClientTokenRecord | undefined> {
    return (await this.t('client_tokens').where({ token_hash: hashToken(token) }).first('id', 'integrator_id', 'revoked_at')) as ClientTokenRecord | undefined;
  }

  async createUtilityKey(utilityId: string, label: string, key = newToken('utility')): Promise<{ id: string; token: string }> {
    const id = randomUUID();
    const rows = await this.t('utility_keys').insert({ id, utility_id: utilityId, key_hash: hashToken(key), label }).onConflict('key_hash').ignore().returning('id');
    if (rows.length === 0) {
      const existing = (await this.t('utility_keys').where({ key_hash: hashToken(key) }).first('id')) as { id: string };
      return { id: existing.id, token: key };
    }
    return { id, token: key };
  }

  async revokeUtilityKey(id: string): Promise<boolean> {
    return (await this.t('utility_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: this.knex.fn.now() })) > 0;
  }

  async findUtilityKey(key: string): Promise<UtilityKeyRecord | undefined> {
    return (await this.t('utility_keys').where({ key_hash: hashToken(key) }).first('id', 'utility_id', 'revoked_at')) as UtilityKeyRecord | undefined;
  }
}
