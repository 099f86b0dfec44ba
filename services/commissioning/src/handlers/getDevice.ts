import { DeviceParams } from '@efs/api';
import { operation } from '@efs/messaging';
import { toDeviceRecord } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';
import { siteDevice } from './siteDevice.ts';

/** `GET /v1/site/{siteId}/device/{deviceId}` (site token). */
export const getDevice = (store: CommissioningStore) =>
  operation({
    params: DeviceParams,
    async handle({ params, principal }) {
      return { body: toDeviceRecord(await siteDevice(store, principal, params.siteId, params.deviceId)) };
    },
  });
