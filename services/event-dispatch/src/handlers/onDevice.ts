import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../service.ts';

/**
 * DevicesTopic: keeps the device read model (type, rated power, own reserve level). A removed
 * device's commands that have not ended are canceled; a device whose own level changed moves the
 * commands whose effective reserve is that level. Idempotent: an older or repeated message writes
 * nothing and so changes no command.
 */
export const onDevice = (ctx: DispatchContext) =>
  async ({ value }: Delivered<DeviceMessage>): Promise<void> => {
    // A device with no level of its own that is not removed moves no command: one statement.
    if (!value.deleted && value.reserve_percentage === null) {
      await ctx.readModels.upsertDevice(ctx.knex, value);
      return;
    }
    await ctx.knex.transaction(async (trx) => {
      if (!(await ctx.readModels.upsertDevice(trx, value))) return;
      const now = ctx.clock();
      const device = { integratorId: value.integrator_id, siteId: value.site_id, deviceId: value.id };
      if (value.deleted) {
        await ctx.commandWriter.announce(trx, await ctx.commands.cancel(trx, device, now), 'CANCELED');
      } else {
        await ctx.commandWriter.announce(trx, await ctx.commands.followDeviceLevel(trx, device, value.reserve_percentage ?? 0, now), 'UPDATED');
      }
    });
  };
