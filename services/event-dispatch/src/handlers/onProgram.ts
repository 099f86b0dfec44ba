import type { ProgramMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../service.ts';

/** ProgramsTopic: keeps the program read model (owner, minimum reserve). */
export const onProgram = (ctx: DispatchContext) =>
  async ({ value }: Delivered<ProgramMessage>): Promise<void> => {
    await ctx.readModels.upsertProgram(ctx.knex, value);
  };
