import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { deviceAtSite, toDeviceRecord } from '../domain/device.ts';

/** `GET /v1/site/{siteId}/device/{deviceId}` (site token). */
export const getDevice = ({ store }: Pick<CommissioningContext, 'store'>) =>
  implement(CommissioningOperations.getDevice, async ({ params, principal }) => {
    const device = await store.getDevice(siteIntegratorOf(principal, params.siteId), params.deviceId);
    return toDeviceRecord(deviceAtSite(device, params.siteId, params.deviceId));
  });
