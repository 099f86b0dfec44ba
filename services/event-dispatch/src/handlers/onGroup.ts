import type { ProgramGroupMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../service.ts';

/** ProgramGroupsTopic: keeps which groups each program has (GROUP targets). */
export const onGroup = (ctx: DispatchContext) =>
  async ({ value }: Delivered<ProgramGroupMessage>): Promise<void> => {
    await ctx.readModels.upsertGroup(ctx.knex, value);
  };
