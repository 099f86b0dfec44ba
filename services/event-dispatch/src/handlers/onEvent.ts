import type { DemandResponseEventMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';

/**
 * DemandResponseEventsTopic (this service's own): a created event gets its commands here unless
 * its request created them already. A redelivered announcement finds the event fanned out and
 * creates nothing.
 */
export const onEvent = (ctx: Pick<DispatchContext, 'fanOut'>) =>
  async ({ value }: Delivered<DemandResponseEventMessage>): Promise<void> => {
    if (value.change === 'CREATED') await ctx.fanOut.run(value.id);
  };
