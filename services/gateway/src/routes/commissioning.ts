import { CommissioningOperations } from '@efs/api';
import { Audience, defineRoutes, type RouteDef } from './route.ts';

const updateSite = (url: string, summary: string): RouteDef => ({
  method: 'PATCH',
  url,
  ...Audience.endUser,
  operation: CommissioningOperations.updateSite,
  summary,
  tags: ['Sites'],
});

/** Commissioning: sites and devices (Cloud API with a client token, Mobile App API with a site token) and supplements. */
export const commissioningRoutes = defineRoutes([
  {
    method: 'POST',
    url: '/v1/commission',
    ...Audience.integrator,
    operation: CommissioningOperations.commission,
    summary: 'Commissions a site and its devices; answers the eligible programs and any auto-enrollment',
    tags: ['Commissioning'],
  },
  {
    method: 'GET',
    url: '/v1/sites',
    ...Audience.integrator,
    operation: CommissioningOperations.listSites,
    summary: "Lists the integrator's sites",
    tags: ['Sites'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId',
    ...Audience.endUser,
    operation: CommissioningOperations.getSite,
    summary: 'Reads the site',
    tags: ['Sites'],
  },
  updateSite('/v1/site/:siteId', 'Updates the site (the end user supplies missing site information)'),
  updateSite('/v1/sites/:siteId', 'Updates the site (alias of PATCH /v1/site/{siteId})'),
  {
    method: 'POST',
    url: '/v1/site/:siteId/devices',
    ...Audience.endUser,
    auth: { accepts: ['client', 'site', 'portalSession'] },
    operation: CommissioningOperations.createDevice,
    summary: 'Creates a device at the site',
    tags: ['Devices'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/devices',
    ...Audience.endUser,
    operation: CommissioningOperations.listDevices,
    summary: 'Lists the devices of the site',
    tags: ['Devices'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/device/:deviceId',
    ...Audience.endUser,
    operation: CommissioningOperations.getDevice,
    summary: 'Reads a device',
    tags: ['Devices'],
  },
  {
    method: 'PATCH',
    url: '/v1/site/:siteId/device/:deviceId',
    ...Audience.endUser,
    operation: CommissioningOperations.updateDevice,
    summary: "Updates a device's descriptive fields",
    tags: ['Devices'],
  },
  {
    method: 'DELETE',
    url: '/v1/site/:siteId/device/:deviceId',
    ...Audience.endUser,
    operation: CommissioningOperations.deleteDevice,
    summary: 'Deletes a device; answers it as it was',
    tags: ['Devices'],
  },
  {
    method: 'POST',
    url: '/v1/supplements',
    ...Audience.integrator,
    operation: CommissioningOperations.createSupplement,
    summary: 'Adds information a program asks for after commissioning',
    tags: ['Commissioning'],
  },
]);
