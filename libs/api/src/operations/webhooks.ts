import { z } from 'zod';
import { defineOperations } from '@efs/contracts';
import {
  Delivery,
  DeliveryListQuery,
  Notification,
  NotificationListQuery,
  ReplayRequest,
  ReplayResponse,
  Webhook,
  WebhookCreate,
  WebhookDeliveryParams,
  WebhookIdParams,
  WebhookListQuery,
  WebhookPatch,
  WebhookWithSecret,
} from '../webhooks.ts';

/**
 * What the webhooks service answers on efs.webhooks.requests, for integrators (client token) and
 * utilities (utility API key) alike: each acts on its own subscriptions only. Each handler is
 * `handlers/<name>.ts`. A refused destination (SSRF rules) answers 400.
 */
export const WebhooksOperations = defineOperations('webhooks', {
  createWebhook: { body: WebhookCreate, response: WebhookWithSecret, errors: ['FORBIDDEN'] },
  listWebhooks: { query: WebhookListQuery, response: z.array(Webhook), errors: ['FORBIDDEN'] },
  getWebhook: { params: WebhookIdParams, response: Webhook, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  updateWebhook: { params: WebhookIdParams, body: WebhookPatch, response: Webhook, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  deleteWebhook: { params: WebhookIdParams, response: Webhook, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  rotateWebhookSecret: { params: WebhookIdParams, response: WebhookWithSecret, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  listWebhookDeliveries: { params: WebhookIdParams, query: DeliveryListQuery, response: z.array(Delivery), errors: ['FORBIDDEN', 'NOT_FOUND'] },
  replayWebhookDelivery: { params: WebhookDeliveryParams, response: Delivery, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  replayWebhook: { params: WebhookIdParams, body: ReplayRequest, response: ReplayResponse, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  listNotifications: { query: NotificationListQuery, response: z.array(Notification), errors: ['FORBIDDEN'] },
});
