import { randomBytes } from 'node:crypto';
import type { Logger } from '@efs/logging';
import { KeyEncryption, type Knex } from '@efs/db';
import type { Keyring, SigningKey } from './signedTokens.ts';

const KID = /^[A-Za-z0-9_-]{1,40}$/;

/**
 * Keys given by the environment (`SITE_TOKEN_SIGNING_KEYS=kid:secret,kid:secret`): the first signs,
 * all verify. Rotation: prepend a new key to every replica's setting, keep the old one listed for
 * at least an hour (the site-token lifetime), then drop it.
 */
export class StaticKeyring implements Keyring {
  private readonly keys: SigningKey[];

  constructor(keys: SigningKey[]) {
    if (keys.length === 0) throw new Error('at least one signing key is required');
    this.keys = keys;
  }

  static parse(setting: string): StaticKeyring {
    const keys = setting
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((pair) => {
        const i = pair.indexOf(':');
        const kid = i > 0 ? pair.slice(0, i) : '';
        const secret = i > 0 ? pair.slice(i + 1) : '';
        if (!KID.test(kid)) throw new Error('SITE_TOKEN_SIGNING_KEYS: each entry is kid:secret with a kid of letters, digits, - or _');
        if (secret.length < 32) throw new Error(`SITE_TOKEN_SIGNING_KEYS: the secret of ${kid} must have at least 32 characters`);
        return { kid, secret: Buffer.from(secret, 'utf8') };
      });
    return new StaticKeyring(keys);
  }

  signingKey(): SigningKey {
    return this.keys[0]!;
  }

  async find(kid: string): Promise<SigningKey | undefined> {
    return this.keys.find((k) => k.kid === kid);
  }
}

interface KeyRow {
  kid: string;
  secret: string;
  activates_at: Date | string;
}

/**
 * Keys kept in the auth schema (`signing_keys`), shared by every replica through the database but
 * read only at start, every SIGNING_KEYS_REFRESH_MS and (throttled) when a token names an unknown
 * kid — never per request. The newest key whose `activates_at` has passed signs; `efs signing-key
 * rotate` adds a key that activates later than every replica's next refresh, so each replica
 * verifies it before any replica signs with it, and tokens of the old key stay valid for their hour.
 * `efs signing-key revoke` retires a key at once: every replica drops it at its next refresh.
 * Secrets are stored sealed with the key-encryption key (keyEncryption.ts); keys stored in plain
 * text by earlier versions, or sealed by a KEK no longer first, are re-sealed at start.
 */
export class KnexKeyring implements Keyring {
  private keys: (SigningKey & { activatesAt: number })[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastMissRefresh = 0;
  private readonly knex: Knex;
  private readonly schema: string;
  private readonly refreshMs: number;
  private readonly logger: Logger;
  private readonly encryption: KeyEncryption;

  constructor(opts: { knex: Knex; schema: string; refreshMs: number; logger: Logger; encryption: KeyEncryption }) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.refreshMs = opts.refreshMs;
    this.logger = opts.logger.child({ component: 'signing-keys' });
    this.encryption = opts.encryption;
  }

  async start(): Promise<void> {
    const resealed = await resealSigningKeys(this.knex, this.schema, this.encryption);
    if (resealed.length > 0) this.logger.info({ kids: resealed }, 'signing keys sealed with the current key-encryption key');
    // First start of a deployment: make a key (replicas racing here each add one; all are valid).
    const [{ count }] = (await this.knex.withSchema(this.schema).table('signing_keys').count({ count: '*' })) as [{ count: string | number }];
    if (Number(count) === 0) await insertSigningKey(this.knex, this.schema, new Date(), this.encryption);
    await this.refresh({ strict: true });
    const tick = () => {
      this.timer = setTimeout(() => {
        this.refresh()
          .catch((err: Error) => this.logger.warn({ err }, 'signing keys refresh failed; keeping the keys known'))
          .finally(() => this.timer !== undefined && tick());
      }, this.refreshMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Reloads the keys. A key that does not open (sealed by a KEK this replica is not given) fails
   * the start (`strict`): a replica must not run with keys it cannot check. Later it is left out
   * with an error line, so one bad row does not take the known keys away.
   */
  async refresh(opts: { strict?: boolean } = {}): Promise<void> {
    // A revoked key is gone at once: tokens it signed stop verifying and it never signs again.
    const rows = (await this.knex.withSchema(this.schema).table('signing_keys').whereNull('revoked_at').select('kid', 'secret', 'activates_at').orderBy('activates_at', 'asc')) as KeyRow[];
    const keys: (SigningKey & { activatesAt: number })[] = [];
    for (const r of rows) {
      let secret: Buffer;
      try {
        secret = openSecret(this.encryption, this.schema, r);
      } catch (err) {
        const message = `signing key ${r.kid} in ${this.schema}.signing_keys: ${(err as Error).message}`;
        if (opts.strict) throw new Error(message, { cause: err });
        this.logger.error({ kid: r.kid }, message);
        continue;
      }
      keys.push({ kid: r.kid, secret, activatesAt: new Date(r.activates_at).getTime() });
    }
    this.keys = keys;
  }

  signingKey(): SigningKey {
    const now = Date.now();
    const active = this.keys.filter((k) => k.activatesAt <= now);
    const key = active[active.length - 1] ?? this.keys[0];
    if (!key) throw new Error('no signing key loaded');
    return key;
  }

  async find(kid: string): Promise<SigningKey | undefined> {
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && Date.now() - this.lastMissRefresh > 5000) {
      this.lastMissRefresh = Date.now();
      await this.refresh().catch((err: Error) => this.logger.warn({ err }, 'signing keys refresh failed'));
      key = this.keys.find((k) => k.kid === kid);
    }
    return key;
  }
}

/** The row's name is the associated data of its ciphertext: a sealed secret copied to another kid does not open. */
const associatedData = (schema: string, kid: string) => `${schema}.signing_keys:${kid}`;

function openSecret(encryption: KeyEncryption, schema: string, row: KeyRow): Buffer {
  if (!KeyEncryption.isSealed(row.secret)) return Buffer.from(row.secret, 'base64url');
  return encryption.open(row.secret, associatedData(schema, row.kid));
}

/**
 * Seals every key stored in plain text (by versions before encryption at rest) or by a KEK that
 * is no longer the first, and answers their kids. Each update names the value it replaces, so
 * replicas starting together re-seal a row once and never overwrite each other's result.
 */
export async function resealSigningKeys(knex: Knex, schema: string, encryption: KeyEncryption): Promise<string[]> {
  const rows = (await knex.withSchema(schema).table('signing_keys').select('kid', 'secret', 'activates_at')) as KeyRow[];
  const done: string[] = [];
  for (const r of rows) {
    if (encryption.isCurrent(r.secret)) continue;
    const secret = openSecret(encryption, schema, r);
    const updated = await knex
      .withSchema(schema)
      .table('signing_keys')
      .where({ kid: r.kid, secret: r.secret })
      .update({ secret: encryption.seal(secret, associatedData(schema, r.kid)) });
    if (updated > 0) done.push(r.kid);
  }
  return done;
}

async function insertSigningKey(knex: Knex, schema: string, activatesAt: Date, encryption: KeyEncryption): Promise<string> {
  const kid = `k${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  await knex.withSchema(schema).table('signing_keys').insert({ kid, secret: encryption.seal(randomBytes(32), associatedData(schema, kid)), activates_at: activatesAt });
  return kid;
}

/**
 * Rotation (`efs signing-key rotate`): adds a key that starts signing after `activationDelayMs`
 * (longer than the replicas' refresh interval) and deletes keys that stopped signing more than
 * `keepMs` ago (longer than the longest token lifetime), whose tokens have all expired.
 */
export async function rotateSigningKey(
  knex: Knex,
  schema: string,
  opts: { activationDelayMs: number; keepMs: number; encryption: KeyEncryption; now?: Date },
): Promise<{ kid: string; activates_at: Date; deleted: string[] }> {
  const now = opts.now ?? new Date();
  const activatesAt = new Date(now.getTime() + opts.activationDelayMs);
  const kid = await insertSigningKey(knex, schema, activatesAt, opts.encryption);
  const rows = (await knex.withSchema(schema).table('signing_keys').select('kid', 'activates_at').orderBy('activates_at', 'asc')) as KeyRow[];
  const deleted: string[] = [];
  // A key stopped signing when the next key activated; it can go once that is older than keepMs.
  for (let i = 0; i < rows.length - 1; i++) {
    const successorActivated = new Date(rows[i + 1]!.activates_at).getTime();
    if (successorActivated <= now.getTime() - opts.keepMs) deleted.push(rows[i]!.kid);
  }
  if (deleted.length) await knex.withSchema(schema).table('signing_keys').whereIn('kid', deleted).delete();
  return { kid, activates_at: activatesAt, deleted };
}

/**
 * Revocation (`efs signing-key revoke KID`): the key stops verifying and signing on every replica
 * at its next refresh (SIGNING_KEYS_REFRESH_MS), so every token it signed is refused from then on.
 * When it is the key signing now (or would be), a new key that signs at once takes its place, so
 * replicas never fall back to it; tokens they sign before their refresh end with it, within seconds.
 * Answers false for a kid the auth schema does not hold (or holds revoked already).
 */
export async function revokeSigningKey(
  knex: Knex,
  schema: string,
  kid: string,
  opts: { encryption: KeyEncryption; now?: Date },
): Promise<{ revoked: boolean; replacement?: string }> {
  const now = opts.now ?? new Date();
  return knex.transaction(async (trx) => {
    // Serialises revocations and rotations of this table for the rest of the transaction.
    await trx.raw(`lock table ${schema}.signing_keys in share row exclusive mode`);
    const updated = await trx.withSchema(schema).table('signing_keys').where({ kid }).whereNull('revoked_at').update({ revoked_at: now });
    if (updated === 0) return { revoked: false };
    const live = (await trx.withSchema(schema).table('signing_keys').whereNull('revoked_at').select('kid', 'activates_at')) as Pick<KeyRow, 'kid' | 'activates_at'>[];
    const activeNow = live.filter((k) => new Date(k.activates_at).getTime() <= now.getTime());
    if (activeNow.length > 0) return { revoked: true };
    return { revoked: true, replacement: await insertSigningKey(trx, schema, now, opts.encryption) };
  });
}
