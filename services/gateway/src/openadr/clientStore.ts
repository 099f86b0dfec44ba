import { randomBytes } from 'node:crypto';
import { SchemaStore } from '@efs/db';
import { constantTimeEqual, hashToken } from '../auth/tokens.ts';
import { ROLE_SCOPES, type OpenAdrRole } from './scopes.ts';

/** Prefixes that make a leaked OpenADR secret or access token recognisable. */
export const OPENADR_SECRET_PREFIX = 'efs_oacs_';
export const OPENADR_TOKEN_PREFIX = 'efs_oat_';

/** An OpenADR client as the auth schema keeps it: its owner, never its secret. */
export interface OpenAdrClient {
  id: string;
  role: OpenAdrRole;
  /** The utility of a BL client. */
  utility_id: string | null;
  /** The integrator of a VEN client. */
  integrator_id: string | null;
  label: string;
  created_at: string;
  revoked_at: string | null;
}

/** What a valid access token stands for. */
export interface OpenAdrGrant {
  client: OpenAdrClient;
  scopes: string[];
  expires_at: Date;
}

interface ClientRow {
  id: string;
  role: OpenAdrRole;
  utility_id: string | null;
  integrator_id: string | null;
  label: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const CLIENT_COLUMNS = ['id', 'role', 'utility_id', 'integrator_id', 'label', 'created_at', 'revoked_at'];

const toClient = (r: ClientRow): OpenAdrClient => ({ ...r, created_at: new Date(r.created_at).toISOString(), revoked_at: r.revoked_at === null ? null : new Date(r.revoked_at).toISOString() });

/**
 * OpenADR clients and the access tokens they get (client credentials grant), in the gateway's
 * auth schema. A secret and a token have full entropy, so their SHA-256 is what is kept (as for
 * client tokens). A token is checked against the database on each request: revoking its client
 * ends it at once, on every replica.
 */
export class KnexOpenAdrClientStore extends SchemaStore {
  /** A new client; its secret is answered here only. The owner (utility or integrator) must exist. */
  async create(client: { role: 'BL'; utility_id: string; label?: string } | { role: 'VEN'; integrator_id: string; label?: string }): Promise<{ client: OpenAdrClient; secret: string }> {
    const secret = OPENADR_SECRET_PREFIX + randomBytes(32).toString('base64url');
    const row = {
      id: `oadr_${randomBytes(12).toString('base64url')}`,
      secret_hash: hashToken(secret),
      role: client.role,
      utility_id: client.role === 'BL' ? client.utility_id : null,
      integrator_id: client.role === 'VEN' ? client.integrator_id : null,
      label: client.label ?? '',
    };
    const [created] = (await this.table('openadr_clients').insert(row).returning(CLIENT_COLUMNS)) as ClientRow[];
    return { client: toClient(created!), secret };
  }

  async list(): Promise<OpenAdrClient[]> {
    const rows = (await this.table('openadr_clients').select(CLIENT_COLUMNS).orderBy('created_at', 'asc')) as ClientRow[];
    return rows.map(toClient);
  }

  /** Revokes a client and, with it, every token it holds; false when there is no such active client. */
  async revoke(id: string): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const updated = await this.table('openadr_clients', trx).where({ id }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
      if (updated === 0) return false;
      await this.table('openadr_tokens', trx).where({ client_id: id }).delete();
      return true;
    });
  }

  /** The active client whose id and secret these are, else undefined (unknown, wrong secret, revoked). */
  async authenticate(id: string, secret: string): Promise<OpenAdrClient | undefined> {
    const row = (await this.table('openadr_clients').where({ id }).whereNull('revoked_at').first([...CLIENT_COLUMNS, 'secret_hash'])) as (ClientRow & { secret_hash: string }) | undefined;
    if (!row || !constantTimeEqual(row.secret_hash, hashToken(secret))) return undefined;
    const { secret_hash: _hash, ...client } = row;
    return toClient(client);
  }

  /** An access token for the client with these scopes (a subset of its role's), valid for ttlSeconds. */
  async issueToken(client: OpenAdrClient, scopes: readonly string[], ttlSeconds: number, now = new Date()): Promise<{ token: string; expires_at: Date }> {
    if (scopes.some((s) => !(ROLE_SCOPES[client.role] as readonly string[]).includes(s))) throw new Error(`scopes ${scopes.join(' ')} exceed the ${client.role} role`);
    const token = OPENADR_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const expires_at = new Date(now.getTime() + ttlSeconds * 1000);
    await this.table('openadr_tokens').insert({ token_hash: hashToken(token), client_id: client.id, scopes: scopes.join(' '), expires_at });
    return { token, expires_at };
  }

  /** What a presented token grants: undefined when unknown, expired, or its client is revoked. */
  async findToken(token: string): Promise<OpenAdrGrant | undefined> {
    if (!token.startsWith(OPENADR_TOKEN_PREFIX)) return undefined;
    const row = (await this.knex
      .withSchema(this.schema)
      .from('openadr_tokens as t')
      .join('openadr_clients as c', 'c.id', 't.client_id')
      .where('t.token_hash', hashToken(token))
      .where('t.expires_at', '>', this.knex.fn.now())
      .whereNull('c.revoked_at')
      .first(...CLIENT_COLUMNS.map((c) => `c.${c}`), 't.scopes', 't.expires_at')) as (ClientRow & { scopes: string; expires_at: Date | string }) | undefined;
    if (!row) return undefined;
    const { scopes, expires_at, ...client } = row;
    return { client: toClient(client), scopes: scopes.split(' ').filter(Boolean), expires_at: new Date(expires_at) };
  }

  /** Drops tokens past their expiry (housekeeping). */
  async purge(): Promise<number> {
    return this.table('openadr_tokens').where('expires_at', '<', this.knex.fn.now()).delete();
  }
}
