import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyEncryption } from '../src/keyEncryption.ts';

const kek = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('key-encryption key (secrets at rest: signing keys, webhook secrets)', () => {
  it('seals with the first key, names it, and opens only with the same associated data', () => {
    const first = kek('a');
    const enc = KeyEncryption.parse(first);
    const secret = randomBytes(32);
    const sealed = enc.seal(secret, 'auth.signing_keys:k1');
    expect(sealed).toMatch(/^enc:v1:a:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret.toString('base64url'));
    expect(enc.open(sealed, 'auth.signing_keys:k1').equals(secret)).toBe(true);
    // Moved to another row, the ciphertext does not open.
    expect(() => enc.open(sealed, 'auth.signing_keys:k2')).toThrow(/does not open/);
    // Another KEK with the same id does not open it either.
    expect(() => KeyEncryption.parse(kek('a')).open(sealed, 'auth.signing_keys:k1')).toThrow(/does not open/);
    expect(() => KeyEncryption.parse(kek('b')).open(sealed, 'auth.signing_keys:k1')).toThrow(/key-encryption key a/);
    // Altered bytes are refused. The second-to-last character always carries six bits of the
    // sealed bytes; it is replaced by another one (deciding by the last character instead left it
    // unchanged whenever it was already an 'A', one run in 64).
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.slice(-1);
    expect(flipped).not.toBe(sealed);
    expect(() => enc.open(flipped, 'auth.signing_keys:k1')).toThrow();
    // Rotation: a new first key seals, the old one still opens.
    const rotated = KeyEncryption.parse(`${kek('b')},${first}`);
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(rotated.open(sealed, 'auth.signing_keys:k1').equals(secret)).toBe(true);
    expect(rotated.isCurrent(rotated.seal(secret, 'x'))).toBe(true);
  });

  it('refuses malformed settings', () => {
    expect(() => KeyEncryption.parse('')).toThrow(/at least one/);
    expect(() => KeyEncryption.parse(randomBytes(32).toString('base64'))).toThrow(/id:key/);
    expect(() => KeyEncryption.parse(`a:${randomBytes(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => KeyEncryption.parse(`${kek('a')},${kek('a')}`)).toThrow(/differ/);
  });
});
