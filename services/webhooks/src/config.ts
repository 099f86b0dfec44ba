import { z } from 'zod';
import { bool, optionalString, parseConfig, positiveInt } from '@efs/config';
import { KeyEncryption } from '@efs/db';
import { parseCidrList, type Cidr } from './domain/destination.ts';
import { parseDuration, parseRetrySchedule } from './domain/retrySchedule.ts';

/** A variable parsed by `parse`, whose error message names what is wrong. */
const parsed = <T>(fallback: string, parse: (text: string) => T) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? fallback : v),
    z.string().transform((text, ctx) => {
      try {
        return parse(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  );

const WebhooksEnv = z
  .object({
    /** Waits before each retry of a failed delivery (jittered); about three days by default. */
    WEBHOOK_RETRY_SCHEDULE: parsed('5s,5m,30m,2h,5h,10h,10h,10h,10h', parseRetrySchedule),
    /** An endpoint failing without a success for this long is disabled. */
    WEBHOOK_DISABLE_AFTER: parsed('72h', parseDuration),
    /** Comma-separated CIDRs a destination may resolve into although they are private, loopback, ... (e.g. 127.0.0.0/8 for tests). */
    WEBHOOK_ALLOWED_CIDRS: parsed<Cidr[]>('', (text) => (text.trim() === '' ? [] : parseCidrList(text))),
    /** Plain http to any public address (https only otherwise; http is always allowed inside WEBHOOK_ALLOWED_CIDRS). */
    WEBHOOK_ALLOW_HTTP: bool(false),
    /** How long one delivery attempt may take (decisions.md: 5 seconds). */
    WEBHOOK_TIMEOUT_MS: positiveInt(5000, 60_000),
    /** Deliveries in flight at once in this process, over every endpoint. */
    WEBHOOK_CONCURRENCY: positiveInt(512, 10_000),
    /** Deliveries in flight at once to one endpoint, so that a slow one takes a bounded share. */
    WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt(32, 1000),
    /**
     * The longest the delivery worker sleeps: new messages, results and API changes of this process
     * wake it, and it wakes when the next retry or lease it saw falls due, so this bounds only how
     * soon it finds what another replica wrote.
     */
    WEBHOOK_POLL_MS: positiveInt(2000, 60_000),
    /**
     * How long a message, its deliveries and their attempts are kept: the feed, the delivery
     * lists and replays reach this far back. A message with a delivery still open is kept until
     * it is finished, however old.
     */
    WEBHOOK_RETENTION: parsed('30d', parseDuration),
    /** How often the messages older than WEBHOOK_RETENTION are removed. */
    WEBHOOK_MAINTENANCE_MS: positiveInt(600_000, 86_400_000),
    /** Messages consumed per transaction from the other services' topics. */
    WEBHOOK_INGEST_BATCH: positiveInt(1000, 10_000),
    /** Seals the signing secrets kept in the webhooks schema (the gateway's key-encryption key). */
    SIGNING_KEY_ENCRYPTION_KEY: optionalString(),
  })
  .superRefine((c, ctx) => {
    if (c.SIGNING_KEY_ENCRYPTION_KEY === undefined) {
      ctx.addIssue({ code: 'custom', path: ['SIGNING_KEY_ENCRYPTION_KEY'], message: 'required to seal the webhook signing secrets' });
      return;
    }
    try {
      KeyEncryption.parse(c.SIGNING_KEY_ENCRYPTION_KEY);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['SIGNING_KEY_ENCRYPTION_KEY'], message: (err as Error).message });
    }
  });
export type WebhooksConfig = z.infer<typeof WebhooksEnv>;

export const parseWebhooksConfig = (env: Record<string, string | undefined>): WebhooksConfig => parseConfig(WebhooksEnv, env);
