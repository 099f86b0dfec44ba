import { randomUUID } from 'node:crypto';
import { SchemaStore } from '@efs/db';
import { hashToken, newToken } from './tokens.ts';

/**
 * Single-use portal session tokens (`efs_ss_`) from POST /v1/sessions, kept hashed in the auth
 * schema: being single-use needs state, so redeeming is one atomic UPDATE that only the first
 * redemption within the lifetime wins.
 */
export class KnexSessionTokenStore extends SchemaStore {
  /** `issuer`: id of the client token that asked for it (revoking it voids the session token). */
  async create(subject: { integrator_id: string; site_id: string; issuer: string | null }, ttlSeconds: number, now = new Date()): Promise<{ token: string; expires_at: Date }> {
    const token = newToken('sessionToken');
    const expires_at = new Date(now.getTime() + ttlSeconds * 1000);
    await this.table('session_tokens').insert({ id: randomUUID(), token_hash: hashToken(token), integrator_id: subject.integrator_id, site_id: subject.site_id, client_token_id: subject.issuer, expires_at });
    return { token, expires_at };
  }

  /** The site a token opens, once: undefined when unknown, expired or already redeemed. */
  async redeem(token: string): Promise<{ integrator_id: string; site_id: string; issuer: string | null } | undefined> {
    const rows = (await this.table('session_tokens')
      .where({ token_hash: hashToken(token) })
      .whereNull('redeemed_at')
      .where('expires_at', '>', this.knex.fn.now())
      .update({ redeemed_at: this.knex.fn.now() })
      .returning(['integrator_id', 'site_id', 'client_token_id as issuer'])) as { integrator_id: string; site_id: string; issuer: string | null }[];
    return rows[0];
  }

  /**
   * What a token is, without redeeming it: the portal page is served (framed as its integrator
   * allows) before the page itself redeems the token, and a used or expired one gets a clear page.
   */
  async peek(token: string): Promise<{ integrator_id: string; site_id: string; issuer: string | null; redeemed: boolean; expired: boolean } | undefined> {
    const row = (await this.table('session_tokens')
      .where({ token_hash: hashToken(token) })
      .first('integrator_id', 'site_id', 'client_token_id as issuer', this.knex.raw('redeemed_at is not null as redeemed'), this.knex.raw('expires_at <= now() as expired'))) as
      | { integrator_id: string; site_id: string; issuer: string | null; redeemed: boolean; expired: boolean }
      | undefined;
    return row;
  }

  /** Drops tokens past their lifetime for more than a day (housekeeping). */
  async purge(): Promise<number> {
    return this.table('session_tokens').where('expires_at', '<', this.knex.raw("now() - interval '1 day'")).delete();
  }
}
