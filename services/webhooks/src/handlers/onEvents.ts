import type { DemandResponseEventMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import { apiEvent, EVENT_KINDS, eventForIntegrator, eventMessage, integrator, utility } from '../domain/announcements.ts';
import type { NewMessage } from '../domain/messages.ts';
import type { WebhooksContext } from '../context.ts';

/**
 * DemandResponseEventsTopic: each change of an event goes to its utility and to every integrator
 * it concerns: those whose ACTIVE enrollments its targets reached when it was first seen, and
 * those its commands reached.
 * An integrator told of the event for the first time gets event.created first.
 */
export const onEvents = (ctx: Pick<WebhooksContext, 'knex' | 'messages' | 'readModels' | 'worker' | 'clock'>) =>
  async (batch: Delivered<DemandResponseEventMessage>[]): Promise<void> => {
    const queued = await ctx.messages.write(
      ctx.knex,
      async (trx) => {
        const out: NewMessage[] = [];
        for (const { value, meta } of batch) {
          const event = apiEvent(value);
          const kind = EVENT_KINDS[value.change];
          await ctx.readModels.upsertEvent(trx, value.utility_id, event);
          out.push(eventMessage(meta.id, utility(value.utility_id), kind, event));
          // Targets resolve once, when the event is first seen, as event-dispatch resolved them (an
          // id that was ambiguous then was refused). Later changes go to the integrators known from
          // then and from the commands, never to one whose site or device took the same id later.
          const known = await ctx.readModels.eventIntegrators(trx, event.id);
          const targeted = known.size === 0 ? await ctx.readModels.integratorsTargeted(trx, event) : new Map<string, string[]>();
          for (const id of new Set([...targeted.keys(), ...known.keys()])) {
            const targets = [...new Set([...(targeted.get(id) ?? []), ...(known.get(id)?.targets ?? [])])];
            const shown = eventForIntegrator(event, targets);
            if (!known.get(id)?.announced) {
              out.push(eventMessage(meta.id, integrator(id), 'event.created', shown));
              await ctx.readModels.markEventIntegrator(trx, event.id, id, true, targets);
              if (kind === 'event.created') continue;
            }
            out.push(eventMessage(meta.id, integrator(id), kind, shown));
          }
        }
        return out;
      },
      ctx.clock,
    );
    if (queued > 0) ctx.worker.wake();
  };
