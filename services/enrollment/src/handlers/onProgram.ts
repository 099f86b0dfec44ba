import type { ProgramMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';

/** ProgramsTopic: keeps the program read model (idempotent upsert by updated_at). */
export const onProgram = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels'>) =>
  async ({ value }: Delivered<ProgramMessage>): Promise<void> => {
    await ctx.readModels.upsertProgram(ctx.knex, value);
  };
