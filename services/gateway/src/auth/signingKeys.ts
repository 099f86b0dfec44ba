import { randomBytes } from 'node:crypto';
import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
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
 */
export class KnexKeyring implements Keyring {
  private keys: (SigningKey & { activatesAt: number })[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastMissRefresh = 0;
  private readonly knex: Knex;
  private readonly schema: string;
  private readonly refreshMs: number;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; schema: string; refreshMs: number; logger: Logger }) {
    this.knex = opts.knex;
    this.schema = opts.schema;
    this.refreshMs = opts.refreshMs;
    this.logger = opts.logger.child({ component: 'signing-keys' });
  }

  async start(): Promise<void> {
    // First start of a deployment: make a key (replicas racing here each add one; all are valid).
    const [{ count }] = (await this.knex.withSchema(this.schema).table('signing_keys').count({ count: '*' })) as [{ count: string | number }];
    if (Number(count) === 0) await insertSigningKey(this.knex, this.schema, new Date());
    await this.refresh();
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

  async refresh(): Promise<void> {
    const rows = (await this.knex.withSchema(this.schema).table('signing_keys').select('kid', 'secret', 'activates_at').orderBy('activates_at', 'asc')) as KeyRow[];
    this.keys = rows.map((r) => ({ kid: r.kid, secret: Buffer.from(r.secret, 'base64url'), activatesAt: new Date(r.activates_at).getTime() }));
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

async function insertSigningKey(knex: Knex, schema: string, activatesAt: Date): Promise<string> {
  const kid = `k${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  await knex.withSchema(schema).table('signing_keys').insert({ kid, secret: randomBytes(32).toString('base64url'), activates_at: activatesAt });
  return kid;
}

/**
 * Rotation (`efs signing-key rotate`): adds a key that starts signing after `activationDelayMs`
 * (longer than the replicas' refresh interval) and deletes keys that stopped signing more than
 * `keepMs` ago (longer than the longest token lifetime), whose tokens have all expired.
 */
export async function rotateSigningKey(knex: Knex, schema: string, opts: { activationDelayMs: number; keepMs: number; now?: Date }): Promise<{ kid: string; activates_at: Date; deleted: string[] }> {
  const now = opts.now ?? new Date();
  const activatesAt = new Date(now.getTime() + opts.activationDelayMs);
  const kid = await insertSigningKey(knex, schema, activatesAt);
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
