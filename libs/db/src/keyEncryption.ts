import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const KEK_ID = /^[A-Za-z0-9_-]{1,40}$/;
const PREFIX = 'enc:v1:';

interface KeyEncryptionKey {
  id: string;
  key: Buffer;
}

/**
 * Envelope encryption of the secrets kept in the auth schema (site-token signing keys), with a
 * key-encryption key (KEK) that lives outside the database: `SIGNING_KEY_ENCRYPTION_KEY`, the
 * shape a KMS key takes (an id and 256 bits). AES-256-GCM with the row's own name as associated
 * data, so a ciphertext moved to another row does not decrypt. The stored form names the KEK that
 * sealed it (`enc:v1:<kek id>:<iv>:<ciphertext and tag>`), so KEKs can be rotated: the first
 * listed seals, every listed one opens, and rows sealed by an older one are re-sealed at start.
 * A database dump alone therefore holds no usable signing key.
 */
export class KeyEncryption {
  private readonly keys: KeyEncryptionKey[];

  private constructor(keys: KeyEncryptionKey[]) {
    this.keys = keys;
  }

  /** `id:base64key[,id:base64key...]` (each key 32 bytes, e.g. `openssl rand -base64 32`); the first seals. */
  static parse(setting: string): KeyEncryption {
    const keys = setting
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry) => {
        const i = entry.indexOf(':');
        const id = i > 0 ? entry.slice(0, i) : '';
        if (!KEK_ID.test(id)) throw new Error('each entry is id:key, the id of letters, digits, - or _');
        const key = Buffer.from(entry.slice(i + 1), 'base64');
        if (key.length !== 32) throw new Error(`the key ${id} must be 32 bytes, base64-encoded (openssl rand -base64 32)`);
        return { id, key };
      });
    if (keys.length === 0) throw new Error('at least one key is required');
    if (new Set(keys.map((k) => k.id)).size !== keys.length) throw new Error('key ids must differ');
    return new KeyEncryption(keys);
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  /** Whether a stored value is sealed by the KEK that seals new values (else it is re-sealed at start). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}${this.keys[0]!.id}:`);
  }

  seal(plaintext: Buffer, associatedData: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${id}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  open(stored: string, associatedData: string): Buffer {
    if (!KeyEncryption.isSealed(stored)) throw new Error('not sealed');
    const [id, iv, sealed] = stored.slice(PREFIX.length).split(':');
    const kek = this.keys.find((k) => k.id === id);
    if (!kek) throw new Error(`sealed with key-encryption key ${id ?? '?'}, which SIGNING_KEY_ENCRYPTION_KEY does not list`);
    const bytes = Buffer.from(sealed ?? '', 'base64url');
    if (bytes.length < 16) throw new Error('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', kek.key, Buffer.from(iv ?? '', 'base64url'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
    } catch {
      throw new Error(`does not open with key-encryption key ${kek.id} (another key, or altered)`);
    }
  }
}
