import { z } from 'zod';
import { defineOperations } from '@efs/contracts';
import { CommissionRequest, CommissionResponse, SiteEnsureRequest, SiteEnsureResponse, Supplement, SupplementCreate } from '../commissioning.ts';
import { Device, DeviceCreate, DeviceListQuery, DeviceParams, DeviceUpdate } from '../devices.ts';
import { SiteListQuery, SiteParams, SiteRecord, SiteUpdate } from '../sites.ts';

/** What commissioning answers on efs.commissioning.requests; each handler is `handlers/<name>.ts`. */
export const CommissioningOperations = defineOperations('commissioning', {
  commission: { body: CommissionRequest, response: CommissionResponse, errors: ['FORBIDDEN', 'CONFLICT', 'SERVICE_UNAVAILABLE'] },
  /** Internal (POST /v1/sessions): commissions the site unless it exists. */
  ensureSite: { body: SiteEnsureRequest, response: SiteEnsureResponse, errors: ['FORBIDDEN', 'CONFLICT'] },
  listSites: { query: SiteListQuery, response: z.array(SiteRecord), errors: ['FORBIDDEN'] },
  getSite: { params: SiteParams, response: SiteRecord, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  updateSite: { params: SiteParams, body: SiteUpdate, response: SiteRecord, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  createDevice: { params: SiteParams, body: DeviceCreate, response: Device, errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'] },
  listDevices: { params: SiteParams, query: DeviceListQuery, response: z.array(Device), errors: ['FORBIDDEN', 'NOT_FOUND'] },
  getDevice: { params: DeviceParams, response: Device, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  /** With `settings`, asks event-dispatch for a settings request first (its 400 and 503 pass through). */
  updateDevice: { params: DeviceParams, body: DeviceUpdate, response: Device, errors: ['FORBIDDEN', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'] },
  deleteDevice: { params: DeviceParams, response: Device, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  createSupplement: { body: SupplementCreate, response: Supplement, errors: ['FORBIDDEN', 'NOT_FOUND'] },
});
