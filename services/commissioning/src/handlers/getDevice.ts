import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { deviceAtSite, toDeviceRecord } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** `GET /v1/site/{siteId}/device/{deviceId}` (site token). */
export const getDevice = (store: CommissioningStore) =>
  implement(CommissioningOperations.getDevice, async ({ params, principal }) => {
    const device = await store.getDevice(siteIntegratorOf(principal, params.siteId), params.deviceId);
    return toDeviceRecord(deviceAtSite(device, params.siteId, params.deviceId));
  });
