import type { CredentialKind, CredentialRecord } from './credentialStore.ts';
import { constantTimeEqual, hashToken } from './tokens.ts';

/**
 * The client tokens and utility keys every replica holds in memory, by hash of the secret: filled
 * from the auth schema at start and kept current from `efs.auth.credentials`. Authenticating a
 * request reads only this map. A revocation is final: a later message without `revoked_at`
 * (older, replayed) never brings a credential back.
 */
export class CredentialCache {
  private readonly byHash = new Map<string, CredentialRecord>();
  private readonly revokedIds = new Set<string>();

  apply(record: CredentialRecord): void {
    const known = this.byHash.get(record.token_hash);
    const revoked_at = known?.revoked_at ?? record.revoked_at;
    this.byHash.set(record.token_hash, { ...record, revoked_at });
    if (revoked_at) this.revokedIds.add(record.id);
  }

  /** Whether the credential with this id is revoked (site tokens and portal sessions name the client token that issued them). */
  isRevoked(id: string): boolean {
    return this.revokedIds.has(id);
  }

  applyAll(records: Iterable<CredentialRecord>): void {
    for (const r of records) this.apply(r);
  }

  /** The credential of a presented secret, if it is of that kind (revoked ones included: the caller says 401). */
  find(kind: CredentialKind, token: string): CredentialRecord | undefined {
    const hash = hashToken(token);
    const record = this.byHash.get(hash);
    if (!record || record.kind !== kind || !constantTimeEqual(record.token_hash, hash)) return undefined;
    return record;
  }

  get size(): number {
    return this.byHash.size;
  }
}
