import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../src/config.ts';

const kek = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('key-encryption key of the gateway', () => {
  it('refuses to start without a KEK, wherever the signing keys live (kept answers carry credentials too)', () => {
    expect(() => parseGatewayConfig({})).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: required/);
    expect(() => parseGatewayConfig({ SIGNING_KEY_ENCRYPTION_KEY: 'a:short' })).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: the key a must be 32 bytes/);
    expect(parseGatewayConfig({ SIGNING_KEY_ENCRYPTION_KEY: kek('a') }).SIGNING_KEY_ENCRYPTION_KEY).toMatch(/^a:/);
    // Keys from the environment still need one: answers kept for replay hold site tokens and webhook secrets.
    expect(() => parseGatewayConfig({ SITE_TOKEN_SIGNING_KEYS: `k:${'s'.repeat(32)}` })).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: required/);
  });
});
