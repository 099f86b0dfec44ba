import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** How long the secret before a rotation still signs, beside the new one (decisions.md: 24 hours). */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks secrets are. */
export const newSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a whsec_ secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` (Standard Webhooks). */
export const signature = (key: Buffer, id: string, timestampS: number, body: string): string =>
  'v1,' + createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64');

/** The three headers of one attempt; every key given signs (the current one first), space-separated. */
export function signedHeaders(keys: readonly Buffer[], id: string, timestampS: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': keys.map((k) => signature(k, id, timestampS, body)).join(' '),
  };
}
