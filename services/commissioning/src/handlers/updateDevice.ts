import { DeviceParams, DeviceUpdate } from '@efs/api';
import { DevicesTopic, deviceKey } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { operation } from '@efs/messaging';
import { applyDeviceUpdate, toDeviceMessage, toDeviceRecord } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';
import { siteDevice } from './siteDevice.ts';

/** `PATCH /v1/site/{siteId}/device/{deviceId}` (site token): descriptive fields; type and attributes stay as installed. */
export const updateDevice = (knex: Knex, store: CommissioningStore, outbox: Outbox) =>
  operation({
    params: DeviceParams,
    body: DeviceUpdate,
    async handle({ params, body, principal }) {
      const device = await knex.transaction(async (trx) => {
        const current = await siteDevice(store, principal, params.siteId, params.deviceId, trx);
        const { device: next, changed } = applyDeviceUpdate(current, body, new Date());
        if (changed) {
          await store.updateDevice(trx, next);
          await outbox.enqueue(trx, DevicesTopic, deviceKey(next.integrator_id, next.site_id, next.id), toDeviceMessage(next));
        }
        return next;
      });
      return { body: toDeviceRecord(device) };
    },
  });
