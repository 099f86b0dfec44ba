import { Errors } from '@efs/errors';
import type { Principal } from '@efs/contracts';
import type { TelemetryContext } from '../context.ts';
import { utilityOf } from '@efs/access';
import type { DeviceRef } from '../store/readingStore.ts';

/**
 * The devices whose telemetry the utility may read in the program: those with a current
 * enrollment in it. Another utility's program is answered as unknown.
 */
export async function programDevices(ctx: Pick<TelemetryContext, 'knex' | 'readModels'>, principal: Principal, programId: string, deviceIds: readonly string[] | undefined): Promise<DeviceRef[]> {
  const utilityId = utilityOf(principal);
  if ((await ctx.readModels.programUtility(ctx.knex, programId)) !== utilityId) throw Errors.NOT_FOUND(`Program ${programId} not found`);
  return ctx.readModels.currentDevices(ctx.knex, programId, deviceIds);
}
