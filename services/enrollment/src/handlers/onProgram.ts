import type { ProgramMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { EnrollmentContext } from '../service.ts';

/** ProgramsTopic: keeps the program read model (idempotent upsert by updated_at). */
export const onProgram = (ctx: EnrollmentContext) =>
  async ({ value }: Delivered<ProgramMessage>): Promise<void> => {
    await ctx.readModels.upsertProgram(ctx.knex, value);
  };
