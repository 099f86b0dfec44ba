import { Command, Enrollment, Event, SettingsRequest, toTelemetryRow, UtilityEnrollment, type EventType, type WebhookEventTypeName } from '@efs/api';
import type { CommandMessage, DemandResponseEventMessage, EnrollmentMessage, ReadingMessage, SettingsRequestMessage } from '@efs/contracts';
import { newMessage, type NewMessage, type Tenant } from './messages.ts';

/**
 * What each record of the other services' topics announces, to whom (decisions.md, Webhooks):
 * the API's view of the resource, for the integrator whose devices it concerns and for the
 * utility whose program it belongs to. Pure: the read models that say who is concerned are
 * asked by the handlers.
 */

export const integrator = (id: string): Tenant => ({ kind: 'integrator', id });
export const utility = (id: string): Tenant => ({ kind: 'utility', id });

export const EVENT_KINDS = { CREATED: 'event.created', UPDATED: 'event.updated', CANCELED: 'event.canceled' } as const satisfies Record<DemandResponseEventMessage['change'], WebhookEventTypeName>;

export const COMMAND_KINDS = {
  CREATED: 'command.created',
  UPDATED: 'command.updated',
  CANCELED: 'command.canceled',
  STARTED: 'command.started',
  ENDED: 'command.ended',
} as const satisfies Record<CommandMessage['change'], WebhookEventTypeName>;

/** An enrollment, first seen or changed: to its integrator (the Enrollment) and its utility (with groups and times). */
export function enrollmentMessages(sourceId: string, e: EnrollmentMessage, change: 'created' | 'updated'): NewMessage[] {
  const eventType = change === 'created' ? 'enrollment.created' : 'enrollment.updated';
  const common = { sourceId, eventType, objectType: 'enrollment', resourceId: e.id, timestamp: e.updated_at } as const;
  return [
    newMessage({ ...common, tenant: integrator(e.integrator_id), object: Enrollment.parse(e) }),
    newMessage({ ...common, tenant: utility(e.utility_id), object: UtilityEnrollment.parse(e) }),
  ];
}

/** The event as the utility API shows it. */
export const apiEvent = (e: DemandResponseEventMessage): EventType => Event.parse(e);

/**
 * The event as an integrator is told of it: a SITE or DEVICE target may name other integrators'
 * sites and devices, so its `target_ids` are the integrator's own among them.
 */
export function eventForIntegrator(e: EventType, ownTargets: readonly string[] | undefined): EventType {
  if ((e.target_type !== 'SITE' && e.target_type !== 'DEVICE') || ownTargets === undefined) return e;
  return { ...e, target_ids: e.target_ids.filter((t) => ownTargets.includes(t)) };
}

export const eventMessage = (sourceId: string, tenant: Tenant, eventType: WebhookEventTypeName, e: EventType): NewMessage =>
  newMessage({ sourceId, tenant, eventType, objectType: 'event', resourceId: e.id, object: e, timestamp: e.updated_at });

export const commandMessage = (sourceId: string, c: CommandMessage): NewMessage =>
  newMessage({ sourceId, tenant: integrator(c.integrator_id), eventType: COMMAND_KINDS[c.change], objectType: 'command', resourceId: c.id, object: Command.parse(c), timestamp: c.updated_at });

/** A new settings request asks the device cloud to apply it; its later outcome is the cloud's own answer, not announced. */
export const settingsMessage = (sourceId: string, r: SettingsRequestMessage): NewMessage | null =>
  r.change === 'CREATED'
    ? newMessage({ sourceId, tenant: integrator(r.integrator_id), eventType: 'settings.apply', objectType: 'settings_request', resourceId: r.id, object: SettingsRequest.parse(r), timestamp: r.updated_at })
    : null;

/**
 * A reading, to the utility of each program whose open enrollment holds the device: the row the
 * utility's telemetry reads show, with its program. Only INTERVAL readings: a COUNTER reading
 * becomes an interval only by difference with the device's previous one, in telemetry-ingest.
 */
export function telemetryMessage(sourceId: string, r: ReadingMessage, to: { utilityId: string; programId: string }): NewMessage | null {
  if (r.kind !== 'INTERVAL') return null;
  const row = toTelemetryRow({ ...r, duration_s: r.duration_s ?? 0 });
  return newMessage({
    sourceId: `${sourceId}/${to.programId}`,
    tenant: utility(to.utilityId),
    eventType: 'telemetry.published',
    objectType: 'telemetry',
    resourceId: `${r.integrator_id}/${r.device_id}`,
    object: { program_id: to.programId, ...row },
    timestamp: r.received_at,
  });
}
