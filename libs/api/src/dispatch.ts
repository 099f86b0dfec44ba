import { z } from 'zod';
import {
  ActionType,
  CommandDeviceStatuses,
  CommandFields,
  CommandStatuses,
  EventFields,
  EventModes,
  EventStatuses,
  PowerModes,
  SetpointModes,
  SettingsRequestFields,
  SettingsStatuses,
  TargetTypes,
} from '@efs/contracts';
import { DateTime, Pagination, repeatable } from './common.ts';
import { DeviceSettings } from './devices.ts';
import { createShape, namedEnum, namedRecord, recordShape, zodOf } from './fields.ts';

export const EventStatus = namedEnum(EventStatuses);
export type EventStatusType = z.infer<typeof EventStatus>;
export const TargetType = namedEnum(TargetTypes);
export type TargetTypeType = z.infer<typeof TargetType>;
export const EventMode = namedEnum(EventModes);
export type EventModeType = z.infer<typeof EventMode>;
export const PowerMode = namedEnum(PowerModes);
export type PowerModeType = z.infer<typeof PowerMode>;
export const SetpointMode = namedEnum(SetpointModes);
export type SetpointModeType = z.infer<typeof SetpointMode>;

/** Modes whose power is set by `power_mode` (and, with SETPOINT, by `setpoint_w`). */
export const POWER_MODES: readonly EventModeType[] = ['CHARGE', 'DISCHARGE'];

/**
 * One action of a new event (decisions.md, Demand-response events): `starts_at`, `duration_s` and
 * `mode` required; `power_mode` only for CHARGE and DISCHARGE (SETPOINT when `setpoint_w` is
 * given, FOLLOW_LOAD otherwise); `setpoint_w` required with SETPOINT and refused without it.
 * That an action must not end in the past is decided by the service, which owns the clock.
 */
export const EventActionCreate = z
  .strictObject(createShape(ActionType.fields))
  .superRefine((a, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    const powered = POWER_MODES.includes(a.mode);
    if (!powered) {
      for (const f of ['power_mode', 'setpoint_mode', 'setpoint_w'] as const) if (a[f] != null) issue(f, `${f} applies only to CHARGE and DISCHARGE`);
      return;
    }
    const powerMode = a.power_mode ?? (a.setpoint_w != null ? 'SETPOINT' : 'FOLLOW_LOAD');
    if (powerMode === 'SETPOINT' && a.setpoint_w == null) issue('setpoint_w', 'setpoint_w is required with power_mode SETPOINT');
    if (powerMode === 'FOLLOW_LOAD') {
      if (a.setpoint_w != null) issue('setpoint_w', 'setpoint_w applies only to power_mode SETPOINT');
      if (a.setpoint_mode != null) issue('setpoint_mode', 'setpoint_mode applies only to power_mode SETPOINT');
    }
  })
  .meta({ id: 'EventActionCreate' });
export type EventActionCreateType = z.infer<typeof EventActionCreate>;

/** `POST {utility_base_url}/v1/events`. A PROGRAM target names the event's program (or nothing). */
export const EventCreate = z
  .strictObject({
    ...createShape(EventFields),
    // Any text: an id that names no program answers 404, not 400.
    program_id: z.string().min(1).max(100),
    actions: z.array(EventActionCreate).min(1).max(EventFields.actions.max),
  })
  .superRefine((e, ctx) => {
    if (e.target_type === 'PROGRAM') {
      e.target_ids.forEach((id, i) => {
        if (id !== e.program_id) ctx.addIssue({ code: 'custom', path: ['target_ids', i], message: 'A PROGRAM target is the event’s program_id' });
      });
    } else if (e.target_ids.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['target_ids'], message: `At least one target id is required with target_type ${e.target_type}` });
    }
  })
  .meta({ id: 'EventCreate' });
export type EventCreateType = z.infer<typeof EventCreate>;

/** An action as every response shows it: all eight fields, null where they do not apply to its mode. */
export const EventAction = namedRecord(ActionType);
export type EventActionType = z.infer<typeof EventAction>;

/** A demand-response event as the utility API answers it. */
export const Event = z.object(recordShape(EventFields)).meta({ id: 'Event' });
export type EventType = z.infer<typeof Event>;

/** `GET {utility_base_url}/v1/events`: newest `starts_at` first. */
export const EventListQuery = Pagination.extend({
  program_id: z.string().min(1).max(100).optional(),
  status: repeatable(EventStatus).optional(),
});
export type EventListQueryType = z.infer<typeof EventListQuery>;

export const EventIdParams = z.object({ id: z.string().min(1).max(100) });
export const EventSitesQuery = Pagination;

/** One targeted site of an event, as its utility sees it (actual figures: null until telemetry covers the event). */
export const EventSite = z
  .object({
    site_id: z.string(),
    is_participating: z.boolean(),
    performance_expected_energy_wh: z.number().int().nullable(),
    performance_actual_energy_wh: z.number().int().nullable(),
    performance_expected_power_w: z.number().int().nullable(),
    performance_actual_power_w: z.number().int().nullable(),
  })
  .meta({ id: 'EventSite' });
export type EventSiteType = z.infer<typeof EventSite>;

export const CommandStatus = namedEnum(CommandStatuses);
export type CommandStatusType = z.infer<typeof CommandStatus>;
export const DeviceStatus = namedEnum(CommandDeviceStatuses);
export type DeviceStatusType = z.infer<typeof DeviceStatus>;

/** What one device does for one action of an event. */
export const Command = z.object(recordShape(CommandFields)).meta({ id: 'Command' });
export type CommandType = z.infer<typeof Command>;

/** `GET /v1/commands` (client token): ordered by `updated_at` then `id`; `updated_since` includes that instant. */
export const CommandListQuery = Pagination.extend({
  status: repeatable(CommandStatus).optional(),
  device_status: repeatable(DeviceStatus).optional(),
  site_id: z.string().min(1).max(255).optional(),
  device_id: z.string().min(1).max(255).optional(),
  updated_since: DateTime.optional(),
});
export type CommandListQueryType = z.infer<typeof CommandListQuery>;

export const CommandIdParams = z.object({ commandId: z.string().min(1).max(100) });

/** `PATCH /v1/command/{commandId}` (client token): the device cloud's acknowledgement. */
export const CommandPatch = z
  .strictObject({
    device_status: z.enum(['OK', 'FAILED_OFFLINE', 'FAILED_FAULT']),
    device_status_reason: zodOf(CommandFields.device_status_reason).optional(),
  })
  .meta({ id: 'CommandPatch' });
export type CommandPatchType = z.infer<typeof CommandPatch>;

/** An event as the end user of one site sees it. */
export const SiteEvent = z
  .object({
    id: z.uuid(),
    program_id: z.string(),
    site_id: z.string(),
    status: EventStatus,
    starts_at: DateTime,
    ends_at: DateTime,
    duration_s: z.number().int(),
    is_participating: z.boolean(),
    device_settings: z.array(
      z.object({
        device_id: z.string(),
        backup_reserve_percentage: z.number().int().nullable().describe('The level set for this event only; null when unset.'),
        effective_backup_reserve_percentage: z.number().int().describe("This event's level if set, else the program's, else the device's own."),
      }),
    ),
    schedule: z.array(
      z.object({
        device_ids: z.array(z.string()),
        starts_at: DateTime,
        ends_at: DateTime,
        duration_s: z.number().int(),
        mode: EventMode,
      }),
    ),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'SiteEvent' });
export type SiteEventType = z.infer<typeof SiteEvent>;

export const SiteEventsParams = z.object({ siteId: z.string().min(1).max(255) });
export const SiteEventParams = z.object({ siteId: z.string().min(1).max(255), eventId: z.string().min(1).max(100) });

/** `GET /v1/site/{siteId}/events`: newest `starts_at` first, `status` repeatable. */
export const SiteEventListQuery = Pagination.extend({ status: repeatable(EventStatus).optional() });
export type SiteEventListQueryType = z.infer<typeof SiteEventListQuery>;

/**
 * `PATCH /v1/site/{siteId}/event/{eventId}`: opt out (or back in), and the reserve for this event
 * only: top-level for every device of the site, `device_settings` per device (applied after it);
 * null clears the event-specific level.
 */
export const SiteEventPatch = z
  .strictObject({
    is_participating: z.boolean().optional(),
    device_settings: z
      .array(z.strictObject({ device_id: z.string().min(1).max(255), backup_reserve_percentage: zodOf(ActionType.fields.backup_reserve_percentage) }))
      .max(1000)
      .optional(),
    backup_reserve_percentage: zodOf(ActionType.fields.backup_reserve_percentage).optional(),
  })
  .meta({ id: 'SiteEventPatch' });
export type SiteEventPatchType = z.infer<typeof SiteEventPatch>;

export const DeviceDispatchesParams = z.object({ siteId: z.string().min(1).max(255), deviceId: z.string().min(1).max(255) });
export const DeviceDispatchesQuery = Pagination;
export const SiteDispatchParams = z.object({ siteId: z.string().min(1).max(255), dispatchId: z.string().min(1).max(100) });

/** `PATCH /v1/site/{siteId}/dispatch/{id}`: opts out of (false) or back into (true) that one command. */
export const DispatchPatch = z.strictObject({ is_participating: z.boolean() }).meta({ id: 'DispatchPatch' });
export type DispatchPatchType = z.infer<typeof DispatchPatch>;

export const SettingsStatus = namedEnum(SettingsStatuses);
export type SettingsStatusType = z.infer<typeof SettingsStatus>;

/** A setting the end user chose for a device, for its cloud to apply. */
export const SettingsRequest = z.object(recordShape(SettingsRequestFields)).meta({ id: 'SettingsRequest' });
export type SettingsRequestType = z.infer<typeof SettingsRequest>;

/** Internal (commissioning, on a device PATCH with `settings`): a settings request for the device. */
export const SettingsRequestCreate = z.object({ site_id: z.string().min(1).max(255), device_id: z.string().min(1).max(255), settings: DeviceSettings });

/** `GET /v1/settings?status=` (client token, repeatable status): oldest first. */
export const SettingsListQuery = Pagination.extend({ status: repeatable(SettingsStatus).optional() });
export const SettingsIdParams = z.object({ settingsRequestId: z.string().min(1).max(100) });

/** `PATCH /v1/settings/{settingsRequestId}` (client token): the device cloud's outcome. */
export const SettingsPatch = z
  .strictObject({ status: z.enum(['APPLIED', 'FAILED']), status_reason: zodOf(SettingsRequestFields.status_reason).optional() })
  .meta({ id: 'SettingsPatch' });
export type SettingsPatchType = z.infer<typeof SettingsPatch>;
