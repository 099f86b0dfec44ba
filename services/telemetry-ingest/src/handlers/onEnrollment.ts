import type { EnrollmentMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';

/** EnrollmentsTopic: which devices each program's utility may read (idempotent upsert by updated_at). */
export const onEnrollment = (ctx: Pick<TelemetryContext, 'knex' | 'readModels'>) =>
  async ({ value }: Delivered<EnrollmentMessage>): Promise<void> => {
    await ctx.readModels.upsertEnrollment(ctx.knex, value);
  };
