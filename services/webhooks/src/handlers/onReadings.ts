import type { ReadingMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { telemetryMessage } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../service.ts';

/** ReadingsTopic: telemetry.published to the utility of each program whose open enrollment holds the device. */
export const onReadings = (ctx: WebhooksContext) =>
  async (batch: Delivered<ReadingMessage>[]): Promise<void> => {
    const intervals = batch.filter((m) => m.value.kind === 'INTERVAL');
    if (intervals.length === 0) return;
    const queued = await ctx.messages.write(
      ctx.knex,
      async (trx) => {
        const recipients = await ctx.readModels.telemetryRecipients(trx, intervals.map(({ value }) => ({ integratorId: value.integrator_id, deviceId: value.device_id })));
        const out: NewMessage[] = [];
        for (const { value, meta } of intervals) {
          for (const to of recipients.get(`${value.integrator_id}/${value.device_id}`) ?? []) {
            const m = telemetryMessage(meta.id, value, to);
            if (m) out.push(m);
          }
        }
        return out;
      },
      ctx.clock,
    );
    if (queued > 0) ctx.worker.wake();
  };
