import { WebhooksOperations } from '@efs/api';
import { defineRoutes, type Listener, type RouteDef } from './route.ts';

/**
 * Webhook subscriptions and the polling feed (decisions.md, Webhooks): the same routes on the
 * public listener for integrators (client token) and on the utility listener for utilities
 * (utility API key); each reaches only its own subscriptions and messages.
 */
const webhookRoutesOn = (listener: Listener): RouteDef[] => {
  const common = { listener, auth: { accepts: [listener === 'public' ? 'client' : 'utility'] }, tags: ['Webhooks'] } as const;
  return [
    { ...common, method: 'POST', url: '/v1/webhooks', operation: WebhooksOperations.createWebhook, summary: 'Subscribes an endpoint; answers the signing secret this once' },
    { ...common, method: 'GET', url: '/v1/webhooks', operation: WebhooksOperations.listWebhooks, summary: 'Lists the subscriptions' },
    { ...common, method: 'GET', url: '/v1/webhooks/:webhookId', operation: WebhooksOperations.getWebhook, summary: 'Reads a subscription' },
    { ...common, method: 'PATCH', url: '/v1/webhooks/:webhookId', operation: WebhooksOperations.updateWebhook, summary: 'Changes a subscription; enabled: true re-enables a disabled endpoint' },
    { ...common, method: 'DELETE', url: '/v1/webhooks/:webhookId', operation: WebhooksOperations.deleteWebhook, summary: 'Deletes a subscription and its queue' },
    { ...common, method: 'POST', url: '/v1/webhooks/:webhookId/rotate-secret', operation: WebhooksOperations.rotateWebhookSecret, summary: 'A new signing secret, shown once; the old one also signs for 24 hours' },
    { ...common, method: 'GET', url: '/v1/webhooks/:webhookId/deliveries', operation: WebhooksOperations.listWebhookDeliveries, summary: 'Lists the deliveries with each attempt' },
    { ...common, method: 'POST', url: '/v1/webhooks/:webhookId/deliveries/:deliveryId/replay', operation: WebhooksOperations.replayWebhookDelivery, summary: 'Sends a delivery’s message again (same webhook-id)' },
    { ...common, method: 'POST', url: '/v1/webhooks/:webhookId/replay', operation: WebhooksOperations.replayWebhook, summary: 'Sends again every message that failed since a time' },
    { ...common, method: 'GET', url: '/v1/notifications', operation: WebhooksOperations.listNotifications, summary: 'The messages webhooks carry, oldest first, from a cursor (polling instead of webhooks)' },
  ];
};

export const webhookRoutes = defineRoutes([...webhookRoutesOn('public'), ...webhookRoutesOn('utility')]);
