import { DispatchOperations } from '@efs/api';
import { Audience, defineRoutes, type RouteDef } from './route.ts';

const acknowledgeCommand = (url: string, summary: string): RouteDef => ({
  method: 'PATCH',
  url,
  ...Audience.integrator,
  operation: DispatchOperations.acknowledgeCommand,
  summary,
  tags: ['Commands'],
});

/**
 * Demand response: the utility's events (API key), the device cloud's commands (client token),
 * the end user's events and the legacy dispatch paths (site token or portal session), and the
 * settings requests device clouds apply (client token).
 */
export const dispatchRoutes = defineRoutes([
  {
    method: 'POST',
    url: '/v1/events',
    ...Audience.utility,
    operation: DispatchOperations.createEvent,
    summary: 'Dispatches a demand-response event to the devices its targets reach',
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/events',
    ...Audience.utility,
    operation: DispatchOperations.listEvents,
    summary: "Lists the utility's events, newest start first",
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/events/:id',
    ...Audience.utility,
    operation: DispatchOperations.getEvent,
    summary: 'Reads an event',
    tags: ['Events'],
  },
  {
    method: 'DELETE',
    url: '/v1/events/:id',
    ...Audience.utility,
    operation: DispatchOperations.cancelEvent,
    summary: 'Cancels an event and its commands that have not ended; answers the event, now CANCELED',
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/events/:id/sites',
    ...Audience.utility,
    operation: DispatchOperations.listEventSites,
    summary: 'Lists the sites an event reaches, with participation and performance',
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/commands',
    ...Audience.integrator,
    operation: DispatchOperations.listCommands,
    summary: "Lists the integrator's commands, ordered by updated_at (poll with updated_since)",
    tags: ['Commands'],
  },
  acknowledgeCommand('/v1/command/:commandId', "Acknowledges a command: the device cloud's device_status"),
  acknowledgeCommand('/v1/commands/:commandId', 'Alias of PATCH /v1/command/{commandId}'),
  {
    method: 'GET',
    url: '/v1/site/:siteId/events',
    ...Audience.endUser,
    operation: DispatchOperations.listSiteEvents,
    summary: 'Lists the past and upcoming events of the site, newest start first',
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/event/:eventId',
    ...Audience.endUser,
    operation: DispatchOperations.getSiteEvent,
    summary: 'Reads an event of the site',
    tags: ['Events'],
  },
  {
    method: 'PATCH',
    url: '/v1/site/:siteId/event/:eventId',
    ...Audience.endUser,
    operation: DispatchOperations.updateSiteEvent,
    summary: 'Opts out of an event or sets the reserve for this event only (while UPCOMING or IN_PROGRESS)',
    tags: ['Events'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/device/:deviceId/dispatches',
    ...Audience.endUser,
    operation: DispatchOperations.listDeviceDispatches,
    summary: "Lists a device's commands (legacy dispatch path)",
    tags: ['Commands'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/dispatch/:dispatchId',
    ...Audience.endUser,
    operation: DispatchOperations.getDispatch,
    summary: 'Reads one command of the site (legacy dispatch path)',
    tags: ['Commands'],
  },
  {
    method: 'PATCH',
    url: '/v1/site/:siteId/dispatch/:dispatchId',
    ...Audience.endUser,
    operation: DispatchOperations.updateDispatch,
    summary: 'Opts out of (or back into) one command (legacy dispatch path)',
    tags: ['Commands'],
  },
  {
    method: 'GET',
    url: '/v1/settings',
    ...Audience.integrator,
    operation: DispatchOperations.listSettingsRequests,
    summary: "Lists the integrator's settings requests (for device clouds that poll instead of taking settings.apply)",
    tags: ['Settings'],
  },
  {
    method: 'PATCH',
    url: '/v1/settings/:settingsRequestId',
    ...Audience.integrator,
    operation: DispatchOperations.updateSettingsRequest,
    summary: 'Reports whether the device cloud applied a settings request',
    tags: ['Settings'],
  },
]);
