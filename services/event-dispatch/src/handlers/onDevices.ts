import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';

/** Whether the device state can move commands: a removed device, or one with a level of its own. */
const movesCommands = (d: DeviceMessage): boolean => d.deleted || d.reserve_percentage !== null;

/**
 * DevicesTopic, a batch at a time (one upsert when no state in it moves commands, else one
 * transaction): keeps the device read model (type, rated
 * power, own reserve level). A removed device's commands that have not ended are canceled; a
 * device whose own level changed moves the commands whose effective reserve is that level.
 * Idempotent: an older or repeated message writes nothing and so changes no command; a batch
 * that fails is retried message by message.
 */
export const onDevices = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'commands' | 'commandWriter' | 'clock'>) =>
  async (batch: Delivered<DeviceMessage>[]): Promise<void> => {
    // Devices with no level of their own that are not removed (every new one) move no command:
    // one statement for the batch, no transaction.
    if (batch.every(({ value }) => !movesCommands(value))) {
      await ctx.readModels.upsertDevices(ctx.knex, batch.map((m) => m.value));
      return;
    }
    await ctx.knex.transaction(async (trx) => {
      for (const { value } of batch) {
        if (!(await ctx.readModels.upsertDevice(trx, value)) || !movesCommands(value)) continue;
        const now = ctx.clock();
        const device = { integratorId: value.integrator_id, siteId: value.site_id, deviceId: value.id };
        if (value.deleted) {
          await ctx.commandWriter.announce(trx, await ctx.commands.cancel(trx, device, now), 'CANCELED');
        } else {
          await ctx.commandWriter.announce(trx, await ctx.commands.followDeviceLevel(trx, device, value.reserve_percentage ?? 0, now), 'UPDATED');
        }
      }
    });
  };
