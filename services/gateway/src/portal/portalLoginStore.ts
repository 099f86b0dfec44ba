import { hash, randomBytes } from 'node:crypto';
import { SchemaStore, type KeyEncryption, type Knex } from '@efs/db';

/** A sign-in under way: what the callback needs to finish it (PKCE verifier, nonce) and where it started. */
export interface SignIn {
  integrator_id: string;
  host: string;
  code_verifier: string;
  nonce: string;
}

/** What taking a sign-in found: it, or why not (never started here, used already, too old). */
export type TakenSignIn = { ok: true; signIn: SignIn } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

/** A standalone portal session: who signed in, on which integrator's host, and the sites their claim names. */
export interface PortalLogin {
  integrator_id: string;
  host: string;
  subject: string;
  site_ids: string[];
  expires_at: Date;
  /** The provider's ID token, the hint of an RP-initiated logout. */
  id_token: string | null;
}

const sha256 = (v: string) => hash('sha256', v, 'hex');

interface LoginRow {
  id_hash: string;
  integrator_id: string;
  host: string;
  subject: string;
  site_ids: string[];
  id_token: string | null;
  expires_at: Date | string;
}

/**
 * `auth.portal_sign_ins` and `auth.portal_logins`. A sign-in is kept by the SHA-256 of its `state`
 * and taken once; a login by the SHA-256 of its cookie, so neither table holds a usable value.
 * The PKCE verifier and the ID token are sealed with the key-encryption key besides.
 */
export class KnexPortalLoginStore extends SchemaStore {
  private readonly encryption: KeyEncryption;

  constructor(knex: Knex, schema: string, encryption: KeyEncryption) {
    super(knex, schema);
    this.encryption = encryption;
  }

  async startSignIn(state: string, signIn: SignIn, ttlSeconds: number): Promise<void> {
    const state_hash = sha256(state);
    await this.table('portal_sign_ins').insert({
      state_hash,
      integrator_id: signIn.integrator_id,
      host: signIn.host,
      code_verifier: this.encryption.seal(Buffer.from(signIn.code_verifier, 'utf8'), `${this.schema}.portal_sign_ins:${state_hash}`),
      nonce: signIn.nonce,
      expires_at: new Date(Date.now() + ttlSeconds * 1000),
    });
  }

  /** Marks the sign-in used and answers it; a second take of the same state finds it used. */
  async takeSignIn(state: string): Promise<TakenSignIn> {
    const state_hash = sha256(state);
    const [row] = (await this.table('portal_sign_ins')
      .where({ state_hash })
      .whereNull('used_at')
      .where('expires_at', '>', this.knex.fn.now())
      .update({ used_at: this.knex.fn.now() })
      .returning(['integrator_id', 'host', 'code_verifier', 'nonce'])) as { integrator_id: string; host: string; code_verifier: string; nonce: string }[];
    if (row) {
      let code_verifier: string;
      try {
        code_verifier = this.encryption.open(row.code_verifier, `${this.schema}.portal_sign_ins:${state_hash}`).toString('utf8');
      } catch {
        // Sealed with a key-encryption key retired since the sign-in started: it cannot be finished.
        return { ok: false, reason: 'expired' };
      }
      return { ok: true, signIn: { integrator_id: row.integrator_id, host: row.host, code_verifier, nonce: row.nonce } };
    }
    const known = (await this.table('portal_sign_ins').where({ state_hash }).first('used_at')) as { used_at: Date | null } | undefined;
    return { ok: false, reason: !known ? 'unknown' : known.used_at ? 'used' : 'expired' };
  }

  /** A new login and the cookie value that names it (only its hash is kept). */
  async createLogin(login: Omit<PortalLogin, 'expires_at'>, ttlSeconds: number): Promise<{ cookie: string; expires_at: Date }> {
    const cookie = randomBytes(32).toString('base64url');
    const id_hash = sha256(cookie);
    const expires_at = new Date(Date.now() + ttlSeconds * 1000);
    await this.table('portal_logins').insert({
      id_hash,
      integrator_id: login.integrator_id,
      host: login.host,
      subject: login.subject,
      site_ids: JSON.stringify(login.site_ids),
      id_token: login.id_token === null ? null : this.encryption.seal(Buffer.from(login.id_token, 'utf8'), `${this.schema}.portal_logins:${id_hash}`),
      expires_at,
    });
    return { cookie, expires_at };
  }

  /** The login a cookie names, unless it ended or expired. */
  async findLogin(cookie: string): Promise<PortalLogin | undefined> {
    const id_hash = sha256(cookie);
    const row = (await this.table('portal_logins').where({ id_hash }).whereNull('ended_at').where('expires_at', '>', this.knex.fn.now()).first()) as LoginRow | undefined;
    return row ? this.loginOf(row) : undefined;
  }

  /** Ends the login on every replica at once (its cookie is refused from now on); answers it when it was live. */
  async endLogin(cookie: string): Promise<PortalLogin | undefined> {
    const id_hash = sha256(cookie);
    const [row] = (await this.table('portal_logins')
      .where({ id_hash })
      .whereNull('ended_at')
      .where('expires_at', '>', this.knex.fn.now())
      .update({ ended_at: this.knex.fn.now() })
      .returning('*')) as LoginRow[];
    return row ? this.loginOf(row) : undefined;
  }

  /** Deletes sign-ins and logins that can no longer be used (kept a day for the record). */
  async purge(): Promise<void> {
    const dayAgo = new Date(Date.now() - 24 * 3600_000);
    await this.table('portal_sign_ins').where('expires_at', '<', dayAgo).delete();
    await this.table('portal_logins').where('expires_at', '<', dayAgo).delete();
  }

  private loginOf(row: LoginRow): PortalLogin {
    return {
      integrator_id: row.integrator_id,
      host: row.host,
      subject: row.subject,
      site_ids: row.site_ids,
      expires_at: new Date(row.expires_at),
      id_token: this.openIdToken(row),
    };
  }

  /** The ID token (only a hint for the provider's logout): none when its seal's KEK has been retired since the sign-in. */
  private openIdToken(row: LoginRow): string | null {
    if (row.id_token === null) return null;
    try {
      return this.encryption.open(row.id_token, `${this.schema}.portal_logins:${row.id_hash}`).toString('utf8');
    } catch {
      return null;
    }
  }
}
