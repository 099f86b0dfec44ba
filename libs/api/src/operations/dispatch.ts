import { z } from 'zod';
import { defineOperations } from '@efs/contracts';
import {
  Command,
  CommandIdParams,
  CommandListQuery,
  CommandPatch,
  DeviceDispatchesParams,
  DeviceDispatchesQuery,
  DispatchPatch,
  Event,
  EventCreate,
  EventIdParams,
  EventListQuery,
  EventSite,
  EventSitesQuery,
  SiteDispatchParams,
  SiteEvent,
  SiteEventListQuery,
  SiteEventParams,
  SiteEventPatch,
  SiteEventsParams,
  SettingsIdParams,
  SettingsListQuery,
  SettingsPatch,
  SettingsRequest,
  SettingsRequestCreate,
} from '../dispatch.ts';

/** What event-dispatch answers on efs.dispatch.requests; each handler is `handlers/<name>.ts`. */
export const DispatchOperations = defineOperations('dispatch', {
  createEvent: { body: EventCreate, response: Event, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'] },
  listEvents: { query: EventListQuery, response: z.array(Event), errors: ['FORBIDDEN', 'NOT_FOUND'] },
  getEvent: { params: EventIdParams, response: Event, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  cancelEvent: { params: EventIdParams, response: Event, errors: ['FORBIDDEN', 'NOT_FOUND', 'EVENT_NOT_MODIFIABLE'] },
  listEventSites: { params: EventIdParams, query: EventSitesQuery, response: z.array(EventSite), errors: ['FORBIDDEN', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'] },
  listCommands: { query: CommandListQuery, response: z.array(Command), errors: ['FORBIDDEN'] },
  acknowledgeCommand: { params: CommandIdParams, body: CommandPatch, response: Command, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  listSiteEvents: { params: SiteEventsParams, query: SiteEventListQuery, response: z.array(SiteEvent), errors: ['FORBIDDEN'] },
  getSiteEvent: { params: SiteEventParams, response: SiteEvent, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  updateSiteEvent: { params: SiteEventParams, body: SiteEventPatch, response: SiteEvent, errors: ['FORBIDDEN', 'NOT_FOUND', 'EVENT_NOT_MODIFIABLE'] },
  listDeviceDispatches: { params: DeviceDispatchesParams, query: DeviceDispatchesQuery, response: z.array(Command), errors: ['FORBIDDEN'] },
  getDispatch: { params: SiteDispatchParams, response: Command, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  updateDispatch: { params: SiteDispatchParams, body: DispatchPatch, response: Command, errors: ['FORBIDDEN', 'NOT_FOUND', 'EVENT_NOT_MODIFIABLE'] },
  /** Internal (commissioning, for the end user's device PATCH): 400 below the minimum of a program the device is ACTIVE in. */
  createSettingsRequest: { body: SettingsRequestCreate, response: SettingsRequest, errors: ['FORBIDDEN'] },
  listSettingsRequests: { query: SettingsListQuery, response: z.array(SettingsRequest), errors: ['FORBIDDEN'] },
  updateSettingsRequest: { params: SettingsIdParams, body: SettingsPatch, response: SettingsRequest, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'] },
});
