import type { SettingsRequestMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { settingsMessage } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';

/** SettingsRequestsTopic: a new settings request is settings.apply to the device's integrator. */
export const onSettingsRequests = (ctx: Pick<WebhooksContext, 'knex' | 'messages' | 'worker' | 'clock'>) =>
  async (batch: Delivered<SettingsRequestMessage>[]): Promise<void> => {
    const queued = await ctx.messages.write(ctx.knex, async () => batch.map(({ value, meta }) => settingsMessage(meta.id, value)).filter((m): m is NewMessage => m !== null), ctx.clock);
    if (queued > 0) ctx.worker.wake();
  };
