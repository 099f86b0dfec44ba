import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, deviceKey } from '@efs/contracts';
import { implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { deviceAtSite, toDeviceMessage, toDeviceRecord } from '../domain/device.ts';

/** `DELETE /v1/site/{siteId}/device/{deviceId}` (site token): removes the device, announces the removal, answers it as it was. */
export const deleteDevice = ({ knex, store, outbox, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'outbox' | 'clock'>) =>
  implement(CommissioningOperations.deleteDevice, async ({ params, principal }) => {
    const device = await knex.transaction(async (trx) => {
      const current = deviceAtSite(await store.getDevice(siteIntegratorOf(principal, params.siteId), params.deviceId, trx), params.siteId, params.deviceId);
      await store.deleteDevice(trx, current.integrator_id, current.id);
      // The tombstone is newer than every earlier state, so read models that upsert by updated_at apply it.
      const tombstone = toDeviceMessage({ ...current, updated_at: new Date(Math.max(clock().getTime(), current.updated_at.getTime() + 1)) }, true);
      await outbox.enqueue(trx, DevicesTopic, deviceKey(current.integrator_id, current.site_id, current.id), tombstone);
      return current;
    });
    return toDeviceRecord(device);
  });
