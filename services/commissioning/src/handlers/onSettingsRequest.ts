import { DevicesTopic, deviceKey, type SettingsRequestMessage } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import type { Delivered } from '@efs/messaging';
import { applyReserve, toDeviceMessage } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/**
 * SettingsRequestsTopic (event-dispatch): a request the device cloud APPLIED sets the device's
 * reserve level, shown as `configuration.reserve_percentage` and announced on the devices topic.
 * Requests of a device arrive in order (keyed by device; a newer one supersedes a pending older
 * one), so the last applied level wins; a repeat changes nothing.
 */
export const onSettingsRequest = (knex: Knex, store: CommissioningStore, outbox: Outbox) =>
  async ({ value }: Delivered<SettingsRequestMessage>): Promise<void> => {
    if (value.status !== 'APPLIED') return;
    await knex.transaction(async (trx) => {
      const current = await store.getDevice(value.integrator_id, value.device_id, trx);
      if (!current || current.site_id !== value.site_id) return;
      const { device, changed } = applyReserve(current, value.settings.backup_reserve_percentage, new Date());
      if (!changed) return;
      await store.updateDevice(trx, device);
      await outbox.enqueue(trx, DevicesTopic, deviceKey(device.integrator_id, device.site_id, device.id), toDeviceMessage(device));
    });
  };
