import type { EnrollmentMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { enrollmentMessages } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';

/**
 * EnrollmentsTopic: an enrollment first seen is enrollment.created, a newer state of it
 * enrollment.updated, to its integrator and its utility; a repeated or older state says nothing.
 */
export const onEnrollments = (ctx: Pick<WebhooksContext, 'knex' | 'messages' | 'readModels' | 'worker' | 'clock'>) =>
  async (batch: Delivered<EnrollmentMessage>[]): Promise<void> => {
    const queued = await ctx.messages.write(
      ctx.knex,
      async (trx) => {
        const out: NewMessage[] = [];
        for (const { value, meta } of batch) {
          const change = await ctx.readModels.upsertEnrollment(trx, value);
          if (change) out.push(...enrollmentMessages(meta.id, value, change));
        }
        return out;
      },
      ctx.clock,
    );
    if (queued > 0) ctx.worker.wake();
  };
