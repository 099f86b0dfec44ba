import { DemandResponseEventsTopic } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import type { CommandWriter } from './commandWriter.ts';
import { toEventMessage, type DrEvent } from '../domain/event.ts';
import { dueTransitions, nextTransitionAt } from '../domain/eventStatus.ts';
import type { CommandStore } from './commandStore.ts';
import type { EventStore } from './eventStore.ts';

interface EventWriterDeps {
  store: EventStore;
  commands: CommandStore;
  commandWriter: CommandWriter;
  outbox: Outbox;
}

/**
 * Every write of an event goes through here, inside the caller's transaction: the row and the
 * domain event announcing the change (efs.dispatch.events, keyed by event id) commit together.
 */
export class EventWriter {
  private readonly deps: EventWriterDeps;

  constructor(deps: EventWriterDeps) {
    this.deps = deps;
  }

  async create(trx: Knex.Transaction, e: DrEvent): Promise<void> {
    await this.deps.store.insert(trx, e);
    await this.publish(trx, e, 'CREATED');
  }

  /**
   * Records and announces every status the event reached by `now` (each at the moment it
   * happened), so that a transition missed while the service was down is applied once.
   */
  async advance(trx: Knex.Transaction, e: DrEvent, now: Date): Promise<DrEvent> {
    let current = e;
    for (const step of dueTransitions(e.status, e, now)) {
      current = { ...current, status: step.status, next_transition_at: nextTransitionAt(step.status, current), updated_at: new Date(Math.max(current.updated_at.getTime(), step.at.getTime())) };
      await this.deps.store.update(trx, current);
      await this.publish(trx, current, 'UPDATED');
    }
    return current;
  }

  /** Cancels an event the caller has locked, with every command of it not ended yet. */
  async cancel(trx: Knex.Transaction, e: DrEvent, now: Date): Promise<DrEvent> {
    const next: DrEvent = { ...e, status: 'CANCELED', canceled_at: now, next_transition_at: null, updated_at: now };
    await this.deps.store.update(trx, next);
    await this.publish(trx, next, 'CANCELED');
    const canceled = await this.deps.commands.cancel(trx, { eventId: e.id }, now);
    await this.deps.commandWriter.announce(trx, canceled, 'CANCELED');
    return next;
  }

  /** Records how far the fan-out got: commands created, commands announced. */
  async fanOutDone(trx: Knex.Transaction, e: DrEvent, step: Pick<DrEvent, 'commands_created_at' | 'commands_announced_at'>): Promise<DrEvent> {
    const next = { ...e, ...step };
    await this.deps.store.update(trx, next);
    return next;
  }

  private async publish(trx: Knex.Transaction, e: DrEvent, change: 'CREATED' | 'UPDATED' | 'CANCELED'): Promise<void> {
    await this.deps.outbox.enqueue(trx, DemandResponseEventsTopic, e.id, toEventMessage(e, change, e.status, e.updated_at));
  }
}
