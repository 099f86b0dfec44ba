import { z } from 'zod';
import { DateTime, Pagination } from './common.ts';

/** What an integrator's webhooks carry (decisions.md, Webhooks). */
export const INTEGRATOR_WEBHOOK_KINDS = [
  'event.created',
  'event.updated',
  'event.canceled',
  'command.created',
  'command.started',
  'command.ended',
  'command.canceled',
  'command.updated',
  'enrollment.created',
  'enrollment.updated',
  'settings.apply',
] as const;

/** What a utility's webhooks carry: its programs' events and enrollments, and their telemetry. */
export const UTILITY_WEBHOOK_KINDS = ['event.created', 'event.updated', 'event.canceled', 'enrollment.created', 'enrollment.updated', 'telemetry.published'] as const;

export const WebhookEventType = z.enum([...INTEGRATOR_WEBHOOK_KINDS, 'telemetry.published']).meta({ id: 'WebhookEventType' });
export type WebhookEventTypeName = z.infer<typeof WebhookEventType>;

/** Most kinds one subscription names (every kind there is). */
const EventTypes = z.array(WebhookEventType).max(20).describe('Kinds to deliver; empty or missing: every kind');

/** An endpoint address: http(s) only, checked against SSRF by the service (400 when refused). */
export const WebhookUrl = z
  .string()
  .max(2048)
  .refine((s) => URL.canParse(s) && ['http:', 'https:'].includes(new URL(s).protocol), { message: 'an http(s) URL is required' });

/** `POST /v1/webhooks` (client token or utility API key). */
export const WebhookCreate = z
  .strictObject({
    url: WebhookUrl,
    event_types: EventTypes.optional(),
    description: z.string().max(500).nullable().optional(),
  })
  .meta({ id: 'WebhookCreate' });
export type WebhookCreateType = z.infer<typeof WebhookCreate>;

/** `PATCH /v1/webhooks/{webhookId}`: `enabled: true` re-enables a disabled endpoint. */
export const WebhookPatch = z
  .strictObject({
    url: WebhookUrl.optional(),
    event_types: EventTypes.optional(),
    enabled: z.boolean().optional(),
  })
  .meta({ id: 'WebhookPatch' });
export type WebhookPatchType = z.infer<typeof WebhookPatch>;

/** A subscription as every endpoint answers it; the secret only on creation and rotation. */
export const Webhook = z
  .object({
    id: z.uuid(),
    url: z.string(),
    event_types: z.array(WebhookEventType),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'Webhook' });
export type WebhookType = z.infer<typeof Webhook>;

/** A subscription with its signing secret (`whsec_...`), shown once. */
export const WebhookWithSecret = Webhook.extend({ secret: z.string().startsWith('whsec_') }).meta({ id: 'WebhookWithSecret' });
export type WebhookWithSecretType = z.infer<typeof WebhookWithSecret>;

export const WebhookIdParams = z.object({ webhookId: z.string().min(1).max(100) });
export const WebhookDeliveryParams = z.object({ webhookId: z.string().min(1).max(100), deliveryId: z.string().min(1).max(100) });
export const WebhookListQuery = Pagination;

export const DeliveryStatus = z.enum(['pending', 'succeeded', 'failed']).meta({ id: 'WebhookDeliveryStatus' });
export type DeliveryStatusType = z.infer<typeof DeliveryStatus>;

/** `GET /v1/webhooks/{webhookId}/deliveries?status=`: newest last. */
export const DeliveryListQuery = Pagination.extend({ status: DeliveryStatus.optional() });
export type DeliveryListQueryType = z.infer<typeof DeliveryListQuery>;

/** One try at sending a message to the endpoint. */
export const DeliveryAttempt = z
  .object({
    attempted_at: DateTime,
    status: z.enum(['succeeded', 'failed']),
    response_status: z.number().int().nullable().describe("the endpoint's HTTP status; null when none came (refused destination, timeout, connection error)"),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

/**
 * One message on its way to one endpoint: pending (queued or to be retried), succeeded, or
 * failed (given up, or refused). A replay is a new delivery of the same message (same webhook-id).
 */
export const Delivery = z
  .object({
    id: z.uuid(),
    webhook_id: z.string().describe('the message id, sent as the webhook-id header'),
    event_type: WebhookEventType,
    status: DeliveryStatus,
    attempts: z.array(DeliveryAttempt),
    next_attempt_at: DateTime.nullable(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryType = z.infer<typeof Delivery>;

/** `POST /v1/webhooks/{webhookId}/replay`: re-send every message whose delivery failed since then. */
export const ReplayRequest = z.strictObject({ since: DateTime }).meta({ id: 'WebhookReplayRequest' });
export type ReplayRequestType = z.infer<typeof ReplayRequest>;
export const ReplayResponse = z.object({ replayed: z.number().int().describe('messages queued again') }).meta({ id: 'WebhookReplayResponse' });

/** `GET /v1/notifications?after=&limit=`: the subscriber's messages after the cursor, oldest first. */
export const NotificationListQuery = z.object({
  after: z
    .string()
    .regex(/^\d{1,18}$/, 'a cursor from an earlier answer')
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export type NotificationListQueryType = z.infer<typeof NotificationListQuery>;

/** A message as webhooks carry it (`{event_type, event_object, timestamp}`), with its webhook-id and cursor. */
export const Notification = z
  .object({
    webhook_id: z.string(),
    cursor: z.string(),
    event_type: WebhookEventType,
    event_object: z.record(z.string(), z.unknown()),
    timestamp: DateTime,
  })
  .meta({ id: 'Notification' });
export type NotificationType = z.infer<typeof Notification>;
