import type { DeviceMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';

/** DevicesTopic: keeps the device read model (idempotent upsert by updated_at). */
export const onDevice = (ctx: EnrollmentContext) =>
  async ({ value }: Delivered<DeviceMessage>): Promise<void> => {
    await ctx.readModels.upsertDevice(ctx.knex, value);
  };
