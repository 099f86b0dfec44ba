import { createHash } from 'node:crypto';
import type { WebhookEventTypeName } from '@efs/api';

/** Who a message is for: an integrator (device cloud) or a utility. */
export type TenantKind = 'integrator' | 'utility';

export interface Tenant {
  kind: TenantKind;
  id: string;
}

/** What `event_object` says the resource is. */
export type ObjectType = 'event' | 'command' | 'enrollment' | 'settings_request' | 'telemetry';

/** A message to store once and deliver to the tenant's matching subscriptions. */
export interface NewMessage {
  id: string;
  tenant: Tenant;
  eventType: WebhookEventTypeName;
  /** Messages about one resource reach an endpoint in order (`command:<id>`, `event:<id>`, ...). */
  resourceKey: string;
  /** The exact body sent and signed: `{event_type, event_object, timestamp}`. */
  body: string;
  createdAt: Date;
}

/**
 * The webhook-id of the message that one consumed record gives one tenant: derived from the
 * record's id, so that a redelivered record yields the same id and the message is stored once.
 */
export function messageId(sourceId: string, tenant: Tenant, eventType: string): string {
  const digest = createHash('sha256').update(`${sourceId}\n${tenant.kind}:${tenant.id}\n${eventType}`).digest('base64url');
  return `msg_${digest.slice(0, 27)}`;
}

/** A message for a tenant about a resource as the API shows it, plus its `object_type`. */
export function newMessage(opts: {
  sourceId: string;
  tenant: Tenant;
  eventType: WebhookEventTypeName;
  objectType: ObjectType;
  resourceId: string;
  object: Record<string, unknown>;
  timestamp: string;
}): NewMessage {
  const body = JSON.stringify({ event_type: opts.eventType, event_object: { ...opts.object, object_type: opts.objectType }, timestamp: opts.timestamp });
  return {
    id: messageId(opts.sourceId, opts.tenant, opts.eventType),
    tenant: opts.tenant,
    eventType: opts.eventType,
    resourceKey: `${opts.objectType}:${opts.resourceId}`,
    body,
    createdAt: new Date(opts.timestamp),
  };
}
