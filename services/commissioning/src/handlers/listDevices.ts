import { DeviceListQuery, SiteParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { assertSiteAccess } from '../domain/access.ts';
import { toDeviceRecord } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** `GET /v1/site/{siteId}/devices` (site token), also asked by the catalog when its read model lags. */
export const listDevices = (store: CommissioningStore) =>
  operation({
    params: SiteParams,
    query: DeviceListQuery,
    async handle({ params, query, principal }) {
      const integratorId = assertSiteAccess(principal, params.siteId);
      if (!(await store.getSite(integratorId, params.siteId))) throw new AppError('NOT_FOUND', `Site ${params.siteId} not found`);
      const devices = await store.listDevices(integratorId, params.siteId, query);
      return { body: devices.map(toDeviceRecord) };
    },
  });
