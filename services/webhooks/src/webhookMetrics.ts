import { addScrapeGauges, meter } from '@efs/telemetry';
import type { AttemptResult } from './store/deliveryStore.ts';

/** What a backlog reading answers: open deliveries due now (enabled endpoints) and how long the oldest has been due. */
export interface Backlog {
  pending: number;
  oldestDueAt: Date | null;
}

const PENDING = { name: 'efs.webhooks.pending', description: 'Webhook deliveries due now and not yet delivered, in flight included (enabled endpoints; retries waiting for their time left out)', unit: '{delivery}' };
const OLDEST_AGE = { name: 'efs.webhooks.pending.oldest_age_seconds', description: 'How long the longest-waiting webhook delivery due now has been due (0 when none)', unit: 's' };

/**
 * The webhooks service's metrics. Counted once the worker has written the attempts (a batch that
 * fails to be written is sent again, and counted then): efs.webhooks.attempts by result,
 * efs.webhooks.deliveries by outcome when a delivery ends (`succeeded`, or `failed` once its
 * retries are exhausted), efs.webhooks.endpoints.disabled by reason (`failing` for too long, or
 * `gone`: a 410). Read at scrape time (`observeBacklog`): efs.webhooks.pending and
 * efs.webhooks.pending.oldest_age_seconds, the deliveries due now and how long the oldest has been
 * due; retries waiting for their time and the deliveries of disabled endpoints are not the
 * backlog. Every attribute object is built here, once.
 */
export function webhookMetrics() {
  const m = meter();
  const attempts = m.createCounter('efs.webhooks.attempts', { description: 'Webhook delivery attempts, by result', unit: '{attempt}' });
  const deliveries = m.createCounter('efs.webhooks.deliveries', { description: 'Webhook deliveries ended, by outcome (succeeded, or failed: every retry used)', unit: '{delivery}' });
  const disabled = m.createCounter('efs.webhooks.endpoints.disabled', { description: 'Webhook endpoints disabled by the service, by reason (failing for too long, or 410 Gone)', unit: '{endpoint}' });
  const service = { service: 'webhooks' };
  const attemptSucceeded = { ...service, result: 'succeeded' };
  const attemptFailed = { ...service, result: 'failed' };
  const delivered = { ...service, outcome: 'succeeded' };
  const givenUp = { ...service, outcome: 'failed' };
  const disabledFailing = { ...service, reason: 'failing' };
  const disabledGone = { ...service, reason: 'gone' };

  return {
    /** Attempts just written, and the endpoints their results disabled. */
    recorded(results: readonly AttemptResult[], disabledEndpoints: readonly { gone: boolean }[]): void {
      let ok = 0;
      let failedAttempts = 0;
      let givenUpDeliveries = 0;
      for (const r of results) {
        if (r.succeeded) ok++;
        else failedAttempts++;
        if (r.status === 'failed') givenUpDeliveries++;
      }
      if (ok > 0) {
        attempts.add(ok, attemptSucceeded);
        deliveries.add(ok, delivered);
      }
      if (failedAttempts > 0) attempts.add(failedAttempts, attemptFailed);
      if (givenUpDeliveries > 0) deliveries.add(givenUpDeliveries, givenUp);
      for (const d of disabledEndpoints) disabled.add(1, d.gone ? disabledGone : disabledFailing);
    },

    /**
     * Reads the backlog at every scrape (addScrapeGauges) with `read`; answers the function that
     * stops reading (a test may start another system in this process). A scrape that comes while
     * the previous one's read still runs waits for that one; a read that fails or is slow leaves
     * the two series out of that scrape rather than repeating an old value.
     */
    observeBacklog(read: () => Promise<Backlog>, now: () => Date): () => void {
      let reading: Promise<Backlog> | undefined;
      return addScrapeGauges(async (observe) => {
        reading ??= read().finally(() => (reading = undefined));
        const b = await reading;
        observe(PENDING, b.pending, service);
        observe(OLDEST_AGE, b.oldestDueAt === null ? 0 : Math.max(0, (now().getTime() - b.oldestDueAt.getTime()) / 1000), service);
      });
    },
  };
}

export type WebhookMetrics = ReturnType<typeof webhookMetrics>;
