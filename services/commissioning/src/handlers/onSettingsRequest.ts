import { DevicesTopic, deviceKey, type SettingsRequestMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { applyReserve, toDeviceMessage } from '../domain/device.ts';

/**
 * SettingsRequestsTopic (event-dispatch): a request the device cloud APPLIED sets the device's
 * reserve level, shown as `configuration.reserve_percentage` and announced on the devices topic.
 * Requests of a device arrive in order (keyed by device; a newer one supersedes a pending older
 * one), so the last applied level wins; a repeat changes nothing.
 */
export const onSettingsRequest = ({ knex, store, outbox, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'outbox' | 'clock'>) =>
  async ({ value }: Delivered<SettingsRequestMessage>): Promise<void> => {
    if (value.status !== 'APPLIED') return;
    await knex.transaction(async (trx) => {
      const current = await store.getDevice(value.integrator_id, value.device_id, trx);
      if (!current || current.site_id !== value.site_id) return;
      const { device, changed } = applyReserve(current, value.settings.backup_reserve_percentage, clock());
      if (!changed) return;
      await store.updateDevice(trx, device);
      await outbox.enqueue(trx, DevicesTopic, deviceKey(device.integrator_id, device.site_id, device.id), toDeviceMessage(device));
    });
  };
