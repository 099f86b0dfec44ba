import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import { attemptOutcome } from '../domain/retrySchedule.ts';
import { signedHeaders } from '../domain/signing.ts';
import type { AttemptResult, ClaimedDelivery, KnexDeliveryStore } from '../store/deliveryStore.ts';
import type { KnexSubscriptionStore } from '../store/subscriptionStore.ts';
import type { WebhookMetrics } from '../webhookMetrics.ts';
import type { EndpointClient } from './endpointClient.ts';

export interface DeliveryWorkerOptions {
  knex: Knex;
  deliveries: KnexDeliveryStore;
  subscriptions: KnexSubscriptionStore;
  client: EndpointClient;
  clock: Clock;
  logger: Logger;
  schedule: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  /** Deliveries in flight at once, over every endpoint. */
  concurrency: number;
  /** Deliveries in flight at once to one endpoint. */
  perEndpoint: number;
  pollMs: number;
  metrics: WebhookMetrics;
}

/** Results are written together: after this many, or this long after the first of them. */
const RECORD_BATCH = 500;
const RECORD_DELAY_MS = 5;

/**
 * The timer that sends what is due: it claims deliveries (each endpoint at most `perEndpoint`
 * in flight, so that a slow or dead endpoint holds a bounded share and never delays the others),
 * signs and sends each on its own, and writes the attempts back in batches. A delivery's next
 * message about the same resource becomes due only once its own result is written.
 */
export class DeliveryWorker {
  private readonly inflight = new Map<string, number>();
  private total = 0;
  private results: AttemptResult[] = [];
  private recordTimer: NodeJS.Timeout | undefined;
  private recording: Promise<void> = Promise.resolve();
  private pumping = false;
  private again = false;
  /** Wakes the worker when the next delivery it saw falls due, or at the latest `pollMs` after its last claim. */
  private timer: NodeJS.Timeout | undefined;
  private timerAt: number | undefined;
  private stopped = true;
  private readonly idle = new Set<() => void>();
  /** Opened signing keys per subscription and sealed secrets (a rotation changes the key of the cache). */
  private readonly keys = new Map<string, Buffer[]>();

  private readonly o: DeliveryWorkerOptions;

  constructor(o: DeliveryWorkerOptions) {
    this.o = o;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Something may be due now (new messages, a re-enabled endpoint, a replay). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  /** Stops claiming, lets what is in flight finish (at most the timeout) and writes its results. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
    if (this.total > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
    await this.record();
    await this.recording;
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    let nextDueAt: number | null = null;
    try {
      do {
        this.again = false;
        const half = Math.max(1, Math.floor(this.o.perEndpoint / 2));
        const room = this.o.concurrency - this.total;
        // Full: each delivery in flight wakes the worker when its result is written.
        if (room <= 0) break;
        const busy = [...this.inflight].filter(([, n]) => n + half > this.o.perEndpoint).map(([id]) => id);
        const c = await this.o.deliveries.claim(this.o.knex, { now: this.o.clock(), leaseMs: this.o.timeoutMs + 60_000, perEndpoint: half, total: room, skipEndpoints: busy });
        for (const d of c.claimed) this.launch(d);
        nextDueAt = c.nextDueAt;
        if (c.claimed.length > 0) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.o.logger.error({ err }, 'claiming webhook deliveries failed');
    } finally {
      this.pumping = false;
      this.sleep(nextDueAt === null ? this.o.pollMs : nextDueAt - this.o.clock().getTime());
    }
  }

  /** Wakes the worker in `ms` (at most `pollMs`), unless it is to wake sooner already. */
  private sleep(ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + Math.max(0, Math.min(ms, this.o.pollMs));
    if (this.timerAt !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      this.wake();
    }, at - Date.now());
  }

  private launch(d: ClaimedDelivery): void {
    this.total++;
    this.inflight.set(d.subscription_id, (this.inflight.get(d.subscription_id) ?? 0) + 1);
    void this.attempt(d).then((result) => {
      this.results.push(result);
      const left = (this.inflight.get(d.subscription_id) ?? 1) - 1;
      if (left === 0) this.inflight.delete(d.subscription_id);
      else this.inflight.set(d.subscription_id, left);
      this.total--;
      if (this.results.length >= RECORD_BATCH) void this.record();
      else this.recordTimer ??= setTimeout(() => void this.record(), RECORD_DELAY_MS);
      if (this.total === 0) for (const done of this.idle) done();
    });
  }

  private async attempt(d: ClaimedDelivery): Promise<AttemptResult> {
    const attemptedAt = this.o.clock();
    let sent: { responseStatus: number | null; error: string | null; durationMs: number };
    try {
      const headers = signedHeaders(this.signingKeys(d, attemptedAt), d.message_id, Math.floor(attemptedAt.getTime() / 1000), d.body);
      sent = await this.o.client.send(d.subscription_id, d.url, headers, d.body);
    } catch (err) {
      this.o.logger.error({ err, subscription: d.subscription_id, delivery: d.id }, 'webhook attempt failed before sending');
      sent = { responseStatus: null, error: 'internal error before sending', durationMs: 0 };
    }
    const outcome = attemptOutcome(sent.responseStatus, d.attempt_count, this.o.schedule, this.o.clock());
    return {
      deliveryId: d.id,
      subscriptionId: d.subscription_id,
      attemptedAt,
      durationMs: sent.durationMs,
      responseStatus: sent.responseStatus,
      error: sent.error,
      ...outcome,
    };
  }

  private signingKeys(d: ClaimedDelivery, now: Date): Buffer[] {
    const until = d.previous_secret_until ? new Date(d.previous_secret_until).getTime() : 0;
    const cacheKey = `${d.subscription_id}\n${d.secret}\n${d.previous_secret ?? ''}\n${until > now.getTime()}`;
    let keys = this.keys.get(cacheKey);
    if (!keys) {
      keys = this.o.subscriptions.signingKeys({ id: d.subscription_id, secret: d.secret, previous_secret: d.previous_secret, previous_secret_until: d.previous_secret_until }, now);
      if (this.keys.size > 10_000) this.keys.clear();
      this.keys.set(cacheKey, keys);
    }
    return keys;
  }

  /** Writes the results gathered so far (one writer at a time, in order), then looks for what became due. */
  private record(): Promise<void> {
    clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    const batch = this.results;
    this.results = [];
    if (batch.length === 0) return this.recording;
    this.recording = this.recording.then(async () => {
      try {
        const disabled = await this.o.deliveries.record(this.o.knex, batch, this.o.clock(), this.o.disableAfterMs);
        this.o.metrics.recorded(batch, disabled);
        for (const d of disabled) this.o.logger.warn({ subscription: d.id, reason: d.reason }, 'webhook endpoint disabled');
      } catch (err) {
        // The leases run out and the deliveries are sent again: at least once.
        this.o.logger.error({ err, results: batch.length }, 'recording webhook attempts failed');
      }
      this.wake();
    });
    return this.recording;
  }
}
