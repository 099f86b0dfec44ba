import { siteIntegratorOf } from '@efs/access';
import { CommissioningOperations, DispatchOperations } from '@efs/api';
import { DevicesTopic, deviceKey, siteKey } from '@efs/contracts';
import { call, implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { deviceAtSite, applyDeviceUpdate, toDeviceMessage, toDeviceRecord } from '../domain/device.ts';

/**
 * `PATCH /v1/site/{siteId}/device/{deviceId}` (site token): descriptive fields (type and
 * attributes stay as installed). `settings` first asks event-dispatch for a settings request (its
 * 400 for a level below a program's minimum passes through; no answer in time is 503), so that a
 * refused level changes nothing. The call runs outside the transaction (embedded mode shares one
 * connection).
 */
export const updateDevice = ({ knex, store, outbox, transport, config, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'outbox' | 'transport' | 'config' | 'clock'>) =>
  implement(CommissioningOperations.updateDevice, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    if (body.settings) {
      const device = deviceAtSite(await store.getDevice(integratorId, params.deviceId), params.siteId, params.deviceId);
      const request = { site_id: device.site_id, device_id: device.id, settings: body.settings };
      await call(transport, DispatchOperations.createSettingsRequest, { principal, body: request }, { timeoutMs: config.COMMISSIONING_DISPATCH_TIMEOUT_MS, key: siteKey(integratorId, device.site_id) });
    }
    const device = await knex.transaction(async (trx) => {
      const current = deviceAtSite(await store.getDevice(integratorId, params.deviceId, trx), params.siteId, params.deviceId);
      const { device: next, changed } = applyDeviceUpdate(current, body, clock());
      if (changed) {
        await store.updateDevice(trx, next);
        await outbox.enqueue(trx, DevicesTopic, deviceKey(next.integrator_id, next.site_id, next.id), toDeviceMessage(next));
      }
      return next;
    });
    return toDeviceRecord(device);
  });
