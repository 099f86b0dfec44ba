import type { ProgramMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';

/** ProgramsTopic: keeps the program read model (owner, minimum reserve). */
export const onProgram = (ctx: Pick<DispatchContext, 'knex' | 'readModels'>) =>
  async ({ value }: Delivered<ProgramMessage>): Promise<void> => {
    await ctx.readModels.upsertProgram(ctx.knex, value);
  };
