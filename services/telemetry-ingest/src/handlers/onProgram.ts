import type { ProgramMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';

/** ProgramsTopic: whose each program is (idempotent upsert by updated_at). */
export const onProgram = (ctx: Pick<TelemetryContext, 'knex' | 'readModels'>) =>
  async ({ value }: Delivered<ProgramMessage>): Promise<void> => {
    await ctx.readModels.upsertProgram(ctx.knex, value);
  };
