import type { ProgramGroupMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';

/** ProgramGroupsTopic: keeps which groups each program has (GROUP targets). */
export const onGroup = (ctx: Pick<DispatchContext, 'knex' | 'readModels'>) =>
  async ({ value }: Delivered<ProgramGroupMessage>): Promise<void> => {
    await ctx.readModels.upsertGroup(ctx.knex, value);
  };
