import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';

/**
 * DevicesTopic, a batch at a time: keeps the device read model (idempotent upsert by
 * updated_at), and takes a deleted device out of its open enrollments (one left with no device
 * ends UNENROLLED). A batch without removals (every commission's) is one upsert statement; one
 * with a removal is applied message by message in one transaction. A redelivery finds the device
 * held by nothing and changes nothing; a batch that fails is retried message by message.
 */
export const onDevices = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'store' | 'writer'>) =>
  async (batch: Delivered<DeviceMessage>[]): Promise<void> => {
    if (batch.every(({ value }) => !value.deleted)) {
      await ctx.readModels.upsertDevices(ctx.knex, batch.map((m) => m.value));
      return;
    }
    await ctx.knex.transaction(async (trx) => {
      for (const { value } of batch) {
        const newest = await ctx.readModels.upsertDevice(trx, value);
        if (!newest || !value.deleted) continue;
        const holding = await ctx.store.lockOpenHoldingDevice(trx, value.integrator_id, value.site_id, value.id);
        for (const e of holding) await ctx.writer.removeDevice(trx, e, value.id, { kind: 'SYSTEM', id: 'device-deleted' });
      }
    });
  };
