import { WebhooksOperations } from '@efs/api';
import { CommandsTopic, DemandResponseEventsTopic, EnrollmentsTopic, ReadingsTopic, SettingsRequestsTopic } from '@efs/contracts';
import { KeyEncryption } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import { systemClock, type Service, type ServiceDeps } from '@efs/runtime';
import type { WebhooksConfig } from './config.ts';
import { WEBHOOKS_SCHEMA, type WebhooksContext } from './context.ts';
import { createWebhook } from './handlers/createWebhook.ts';
import { deleteWebhook } from './handlers/deleteWebhook.ts';
import { DeliveryWorker } from './handlers/deliveryWorker.ts';
import { EndpointClient } from './handlers/endpointClient.ts';
import { getWebhook } from './handlers/getWebhook.ts';
import { listNotifications } from './handlers/listNotifications.ts';
import { listWebhookDeliveries } from './handlers/listWebhookDeliveries.ts';
import { listWebhooks } from './handlers/listWebhooks.ts';
import { onCommands } from './handlers/onCommands.ts';
import { onEnrollments } from './handlers/onEnrollments.ts';
import { onEvents } from './handlers/onEvents.ts';
import { onReadings } from './handlers/onReadings.ts';
import { onSettingsRequests } from './handlers/onSettingsRequests.ts';
import { replayWebhook } from './handlers/replayWebhook.ts';
import { replayWebhookDelivery } from './handlers/replayWebhookDelivery.ts';
import { RetentionSweeper } from './handlers/retentionSweeper.ts';
import { rotateWebhookSecret } from './handlers/rotateWebhookSecret.ts';
import { updateWebhook } from './handlers/updateWebhook.ts';
import { KnexDeliveryStore } from './store/deliveryStore.ts';
import { KnexMessageStore } from './store/messageStore.ts';
import { KnexReadModelStore } from './store/readModelStore.ts';
import { KnexSubscriptionStore } from './store/subscriptionStore.ts';
import { webhookMetrics } from './webhookMetrics.ts';

/** How long a scrape's backlog query may run in the database (the scrape itself waits at most 3 s). */
const BACKLOG_QUERY_TIMEOUT_MS = 2000;

export interface WebhooksService extends Service {
  readonly context: WebhooksContext;
}

/**
 * Composition root of the webhooks service: it turns the other services' announcements into
 * messages for the integrators and utilities they concern, stores each once, and delivers them
 * to the matching subscriptions (signed, retried, in order per resource); the feed serves the
 * same messages to those who poll.
 */
export async function createWebhooksService(deps: ServiceDeps<WebhooksConfig>): Promise<WebhooksService> {
  const c = deps.config;
  const logger = deps.logger.child({ service: 'webhooks' });
  const knex = deps.db.knex;
  const clock = systemClock;
  const subscriptions = new KnexSubscriptionStore(WEBHOOKS_SCHEMA, KeyEncryption.parse(c.SIGNING_KEY_ENCRYPTION_KEY ?? ''));
  const deliveries = new KnexDeliveryStore(WEBHOOKS_SCHEMA);
  const client = new EndpointClient({ rules: { allowed: c.WEBHOOK_ALLOWED_CIDRS, allowHttp: c.WEBHOOK_ALLOW_HTTP }, timeoutMs: c.WEBHOOK_TIMEOUT_MS, maxSocketsPerEndpoint: c.WEBHOOK_ENDPOINT_CONCURRENCY });
  const metrics = webhookMetrics();
  const worker = new DeliveryWorker({
    knex,
    deliveries,
    subscriptions,
    client,
    clock,
    logger,
    schedule: c.WEBHOOK_RETRY_SCHEDULE,
    disableAfterMs: c.WEBHOOK_DISABLE_AFTER,
    timeoutMs: c.WEBHOOK_TIMEOUT_MS,
    concurrency: c.WEBHOOK_CONCURRENCY,
    perEndpoint: c.WEBHOOK_ENDPOINT_CONCURRENCY,
    pollMs: c.WEBHOOK_POLL_MS,
    metrics,
  });
  const messages = new KnexMessageStore(WEBHOOKS_SCHEMA);
  const retention = new RetentionSweeper({ knex, messages, clock, logger, retentionMs: c.WEBHOOK_RETENTION, everyMs: c.WEBHOOK_MAINTENANCE_MS });
  const ctx: WebhooksContext = { knex, subscriptions, messages, deliveries, readModels: new KnexReadModelStore(WEBHOOKS_SCHEMA), client, worker, retention, clock, logger };

  const handlers = bindHandlers(WebhooksOperations, ctx, {
    createWebhook,
    listWebhooks,
    getWebhook,
    updateWebhook,
    deleteWebhook,
    rotateWebhookSecret,
    listWebhookDeliveries,
    replayWebhookDelivery,
    replayWebhook,
    listNotifications,
  });

  const batch = { maxBatchSize: c.WEBHOOK_INGEST_BATCH };
  let stopBacklog: (() => void) | undefined;
  return {
    name: 'webhooks',
    context: ctx,
    async start() {
      // Enrollments first: they say whom the events concern.
      await deps.transport.subscribeBatch(EnrollmentsTopic, 'efs-webhooks-enrollments', onEnrollments(ctx), { ...batch, fromBeginning: true });
      await deps.transport.subscribeBatch(DemandResponseEventsTopic, 'efs-webhooks-events', onEvents(ctx), { ...batch, fromBeginning: true });
      await deps.transport.subscribeBatch(CommandsTopic, 'efs-webhooks-commands', onCommands(ctx), { ...batch, fromBeginning: true });
      await deps.transport.subscribeBatch(SettingsRequestsTopic, 'efs-webhooks-settings', onSettingsRequests(ctx), { ...batch, fromBeginning: true });
      // Readings are announced from when this service first runs on: a week of history is not news.
      // The whole fleet's readings: a fetch of a few hundred kilobytes or what came in 200 ms, as
      // telemetry-ingest takes them: fewer fetches and lookups under load, at most 200 ms more when quiet.
      await deps.transport.subscribeBatch(ReadingsTopic, 'efs-webhooks-readings', onReadings(ctx), { ...batch, fetchMinBytes: 256 * 1024, fetchMaxWaitMs: 200 });
      worker.start();
      retention.start();
      stopBacklog = metrics.observeBacklog(() => deliveries.backlog(knex, clock(), BACKLOG_QUERY_TIMEOUT_MS), clock);
      await deps.transport.serve('webhooks', operationRouter(WebhooksOperations, handlers, logger));
    },
    async stop() {
      stopBacklog?.();
      await retention.stop();
      await worker.stop();
      client.close();
    },
  };
}
