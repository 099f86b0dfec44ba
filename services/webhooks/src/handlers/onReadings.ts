import type { ReadingBatchMessage, ReadingMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { telemetryMessage } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';
import { recipientKey } from '../store/readModelStore.ts';

/**
 * ReadingsTopic: telemetry.published to the utility of each program whose open enrollment holds
 * the device. A record carries many readings; each is known by the record's id and its place in
 * it (stable when the record is delivered again).
 *
 * Most readings come from devices no open enrollment holds, and every reading of the fleet passes
 * here: the batch's distinct devices are looked up first, outside the writers' lock and without a
 * transaction, and a batch none of whose devices has a recipient ends there. Only a batch with
 * recipients takes the lock and decides under it as before (looking them up again). A reading
 * consumed while its device's enrollment is being opened may so miss it where the lock would
 * have waited for it; the two topics are not ordered with each other anyway (the reading could
 * as well have been consumed a moment earlier).
 */
export const onReadings = (ctx: Pick<WebhooksContext, 'knex' | 'messages' | 'readModels' | 'worker' | 'clock'>) =>
  async (batch: Delivered<ReadingBatchMessage>[]): Promise<void> => {
    const intervals: { id: string; value: ReadingMessage }[] = [];
    for (const { value, meta } of batch) value.readings.forEach((r, i) => r.kind === 'INTERVAL' && intervals.push({ id: `${meta.id}/${i}`, value: r }));
    if (intervals.length === 0) return;
    const devices = new Map<string, { integratorId: string; deviceId: string }>();
    for (const { value } of intervals) devices.set(recipientKey(value.integrator_id, value.device_id), { integratorId: value.integrator_id, deviceId: value.device_id });
    const anyone = await ctx.readModels.telemetryRecipients(ctx.knex, [...devices.values()]);
    if (anyone.size === 0) return;
    const queued = await ctx.messages.write(
      ctx.knex,
      async (trx) => {
        const recipients = await ctx.readModels.telemetryRecipients(trx, [...devices.values()]);
        const out: NewMessage[] = [];
        for (const { value, id } of intervals) {
          for (const to of recipients.get(recipientKey(value.integrator_id, value.device_id)) ?? []) {
            const m = telemetryMessage(id, value, to);
            if (m) out.push(m);
          }
        }
        return out;
      },
      ctx.clock,
    );
    if (queued > 0) ctx.worker.wake();
  };
