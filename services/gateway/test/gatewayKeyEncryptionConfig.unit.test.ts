import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../src/config.ts';

const kek = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('key-encryption key of the gateway', () => {
  it('refuses to start without a KEK when keys live in the database', () => {
    expect(() => parseGatewayConfig({})).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: required/);
    expect(() => parseGatewayConfig({ SIGNING_KEY_ENCRYPTION_KEY: 'a:short' })).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: the key a must be 32 bytes/);
    expect(parseGatewayConfig({ SIGNING_KEY_ENCRYPTION_KEY: kek('a') }).SIGNING_KEY_ENCRYPTION_KEY).toMatch(/^a:/);
    // Keys from the environment need no KEK.
    expect(parseGatewayConfig({ SITE_TOKEN_SIGNING_KEYS: `k:${'s'.repeat(32)}` }).SIGNING_KEY_ENCRYPTION_KEY).toBeUndefined();
  });
});
