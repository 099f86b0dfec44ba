import { randomUUID } from 'node:crypto';
import { KeyEncryption, type Knex } from '@efs/db';

/** What identifies one idempotent request: who sent it, where, and its key. */
export interface KeyedRequest {
  /** The credential's tenant (kind and ids): keys of different callers never meet. */
  scope: string;
  method: string;
  path: string;
  key: string;
  /** Hash of what the request carried (query and body): the same key with another one is refused. */
  fingerprint: string;
}

/** An answer kept for replay. */
export interface StoredAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export type Claim =
  /** This request holds the key: it runs, then records its answer or releases the key. */
  | { kind: 'claimed'; claim: string }
  /** The key was answered already: replay that answer. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The key was used with another query or body. */
  | { kind: 'mismatch' }
  /** A request with the key is still running. */
  | { kind: 'in-flight' };

interface Row {
  fingerprint: string;
  claim: string;
  state: 'in_flight' | 'done';
  status: number | null;
  body: string | null;
  headers: Record<string, string> | string | null;
}

interface IdempotencyKeysOptions {
  knex: Knex;
  schema: string;
  /** How long an answer is kept for replay. */
  ttlSeconds: number;
  /**
   * How long a claim holds its key without an answer; after it (the holder crashed) a request with
   * the same key and body may take it over.
   */
  lockSeconds: number;
  /**
   * Kept answers are always sealed with the key-encryption key, as they can carry credentials (a
   * webhook's signing secret, a site token, a portal session) that their owners otherwise keep only
   * sealed or hashed.
   */
  encryption: KeyEncryption;
}

/**
 * Idempotency keys in the gateway's schema (Stripe's semantics): the first request with a key
 * claims it in one statement (so of concurrent ones exactly one runs), and its answer is kept
 * for `ttlSeconds`. Every gateway replica shares the table.
 */
export class KnexIdempotencyKeys {
  private readonly opts: IdempotencyKeysOptions;

  constructor(opts: IdempotencyKeysOptions) {
    this.opts = opts;
  }

  private rows() {
    return this.opts.knex.withSchema(this.opts.schema).table('idempotency_keys');
  }

  /** Claims the key for this request, or says why not (answered already, other body, in flight). */
  async claim(req: KeyedRequest): Promise<Claim> {
    const claim = randomUUID();
    // Insert, or take over a row past its lifetime, or one whose holder never answered (same request only).
    const { knex, schema, lockSeconds, ttlSeconds } = this.opts;
    const taken = await knex.raw(
      `insert into ${schema}.idempotency_keys (scope, method, path, key, fingerprint, claim, state, created_at, locked_until)
       values (?, ?, ?, ?, ?, ?, 'in_flight', now(), now() + make_interval(secs => ?))
       on conflict (scope, method, path, key) do update
         set fingerprint = excluded.fingerprint, claim = excluded.claim, state = 'in_flight', status = null, body = null, headers = null,
             created_at = excluded.created_at, locked_until = excluded.locked_until
         where idempotency_keys.created_at < now() - make_interval(secs => ?)
            or (idempotency_keys.state = 'in_flight' and idempotency_keys.locked_until < now() and idempotency_keys.fingerprint = excluded.fingerprint)
       returning claim`,
      [req.scope, req.method, req.path, req.key, req.fingerprint, claim, lockSeconds, ttlSeconds],
    );
    if ((taken.rows as { claim: string }[]).length > 0) return { kind: 'claimed', claim };
    const row = (await this.rows().where({ scope: req.scope, method: req.method, path: req.path, key: req.key }).first()) as Row | undefined;
    // Gone between the two statements (purged, or released by its holder): try once more.
    if (!row) return this.claim(req);
    if (row.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
    if (row.state === 'in_flight') return { kind: 'in-flight' };
    const headers = typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : (row.headers ?? {});
    return { kind: 'replay', answer: { status: row.status!, body: this.openBody(req, row.body ?? ''), headers } };
  }

  /** Keeps the answer of a claimed key for replay. */
  async record(req: KeyedRequest, claim: string, answer: StoredAnswer): Promise<void> {
    await this.rows()
      .where({ scope: req.scope, method: req.method, path: req.path, key: req.key, claim })
      .update({ state: 'done', status: answer.status, body: this.sealBody(req, answer.body), headers: JSON.stringify(answer.headers) });
  }

  private sealBody(req: KeyedRequest, body: string): string {
    return this.opts.encryption.seal(Buffer.from(body, 'utf8'), associatedData(req));
  }

  private openBody(req: KeyedRequest, stored: string): string {
    // Answers kept by a release that ran without a key-encryption key are plain until they expire.
    return KeyEncryption.isSealed(stored) ? this.opts.encryption.open(stored, associatedData(req)).toString('utf8') : stored;
  }

  /** Lets go of a claimed key whose request did nothing (a retry runs afresh). */
  async release(req: KeyedRequest, claim: string): Promise<void> {
    await this.rows().where({ scope: req.scope, method: req.method, path: req.path, key: req.key, claim, state: 'in_flight' }).delete();
  }

  /** Deletes keys past their lifetime; answers how many. */
  async purge(): Promise<number> {
    return this.rows().where('created_at', '<', this.opts.knex.raw('now() - make_interval(secs => ?)', [this.opts.ttlSeconds])).delete();
  }
}

/** Binds a sealed answer to its key: it opens only for the request it answers. */
const associatedData = (req: KeyedRequest): string => `idempotency:${req.scope}:${req.method}:${req.path}:${req.key}`;
