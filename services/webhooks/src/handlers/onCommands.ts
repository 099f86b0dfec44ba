import type { CommandMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { commandMessage, eventForIntegrator, eventMessage, integrator } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';

/**
 * CommandsTopic: each change of a command goes to its integrator. The first command of an
 * event that reaches an integrator not yet told of the event (its enrollment reached this
 * service after the event did) announces the event to it first; a command that arrives before
 * its event leaves that to the event's own announcement.
 */
export const onCommands = (ctx: Pick<WebhooksContext, 'knex' | 'messages' | 'readModels' | 'worker' | 'clock'>) =>
  async (batch: Delivered<CommandMessage>[]): Promise<void> => {
    const queued = await ctx.messages.write(
      ctx.knex,
      async (trx) => {
        const out: NewMessage[] = [];
        const settled = new Set<string>();
        for (const { value, meta } of batch) {
          const key = `${value.event_id}\n${value.integrator_id}`;
          if (!settled.has(key)) {
            settled.add(key);
            const known = (await ctx.readModels.eventIntegrators(trx, value.event_id)).get(value.integrator_id);
            if (!known?.announced) {
              const event = await ctx.readModels.event(trx, value.event_id);
              const targets = event ? ((await ctx.readModels.integratorsTargeted(trx, event)).get(value.integrator_id) ?? []) : [];
              const own = [...new Set([...targets, ...(known?.targets ?? []), event?.target_type === 'DEVICE' ? value.device_id : value.site_id])];
              if (event) out.push(eventMessage(meta.id, integrator(value.integrator_id), 'event.created', eventForIntegrator(event, own)));
              await ctx.readModels.markEventIntegrator(trx, value.event_id, value.integrator_id, event !== null, own);
            }
          }
          out.push(commandMessage(meta.id, value));
        }
        return out;
      },
      ctx.clock,
    );
    if (queued > 0) ctx.worker.wake();
  };
