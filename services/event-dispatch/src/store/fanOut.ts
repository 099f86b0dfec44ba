import { randomUUIDv7 } from 'node:crypto';
import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { CommandWriter } from './commandWriter.ts';
import type { Command } from '../domain/command.ts';
import type { DrEvent } from '../domain/event.ts';
import { planCommands } from '../domain/fanOut.ts';
import type { EventWriter } from './eventWriter.ts';
import type { CommandStore } from './commandStore.ts';
import type { EventStore } from './eventStore.ts';
import type { ReadModelStore } from './readModelStore.ts';

/**
 * Creates an event's commands: its targets resolved to devices in one query, the commands and
 * sites computed in memory and the commands written with COPY, with the event's "commands
 * created" mark in the same transaction. Command ids are UUIDv7 (time-ordered): each index keyed
 * by id then grows at its end instead of splitting pages all over it. Then they are announced
 * (command.created, one outbox row each, written with COPY when there are thousands), with the
 * "announced" mark: in the same transaction for an event created inline, in the next one for a
 * large event, so that its commands become readable without waiting for their announcements. An
 * event left created but not announced (a crash between the two) is announced by the scheduler.
 * Idempotent: each step is skipped once marked, and a command that exists already (same event,
 * action and device) is never inserted twice.
 */
export class FanOut {
  private readonly knex: Knex;
  private readonly events: EventStore;
  private readonly commands: CommandStore;
  private readonly readModels: ReadModelStore;
  private readonly eventWriter: EventWriter;
  private readonly commandWriter: CommandWriter;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; events: EventStore; commands: CommandStore; readModels: ReadModelStore; eventWriter: EventWriter; commandWriter: CommandWriter; clock: Clock; logger: Logger }) {
    this.knex = opts.knex;
    this.events = opts.events;
    this.commands = opts.commands;
    this.readModels = opts.readModels;
    this.eventWriter = opts.eventWriter;
    this.commandWriter = opts.commandWriter;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'fan-out' });
  }

  /** Creates the event's commands in one transaction and announces them in the next; returns how many were created. */
  async run(eventId: string): Promise<number> {
    const created = await this.knex.transaction(async (trx) => {
      const e = await this.events.find(trx, eventId, {}, { forUpdate: true });
      return e ? this.create(trx, e) : undefined;
    });
    await this.knex.transaction(async (trx) => {
      const e = await this.events.find(trx, eventId, {}, { forUpdate: true });
      if (e) await this.announce(trx, e, created?.commands);
    });
    return created?.commands.length ?? 0;
  }

  /** Creates and announces the commands of an event the caller has just inserted, in the caller's transaction. */
  async runLocked(trx: Knex.Transaction, e: DrEvent): Promise<number> {
    const created = await this.create(trx, e);
    if (created) await this.announce(trx, created.event, created.commands);
    return created?.commands.length ?? 0;
  }

  private async create(trx: Knex.Transaction, e: DrEvent): Promise<{ event: DrEvent; commands: Command[] } | undefined> {
    if (e.commands_created_at !== null || e.canceled_at !== null) return undefined;
    const started = performance.now();
    const now = this.clock();
    const lap = (() => {
      let last = started;
      return () => Math.round(-last + (last = performance.now()));
    })();
    const devices = await this.readModels.resolveDevices(trx, e.program_id, e.target_type, e.resolved_targets ?? e.target_ids.map((id) => ({ id, integrator_id: null })));
    const resolveMs = lap();
    const { commands, sites } = planCommands(e, devices, now, randomUUIDv7);
    const planMs = lap();
    await this.events.insertSites(trx, sites);
    const sitesMs = lap();
    const inserted = await this.commandWriter.insert(trx, commands);
    const insertMs = lap();
    const event = await this.eventWriter.fanOutDone(trx, e, { commands_created_at: now, commands_announced_at: null });
    // Each step's share, so a slow fan-out says where its time went (bench/dispatchFanout.ts).
    this.logger.info(
      { event_id: e.id, devices: devices.length, commands: inserted.length, ms: Math.round(performance.now() - started), resolve_ms: resolveMs, plan_ms: planMs, sites_ms: sitesMs, insert_ms: insertMs },
      'commands created',
    );
    return { event, commands: inserted };
  }

  /** Announces the commands of a locked event once; `known` spares reading back what was just inserted. */
  private async announce(trx: Knex.Transaction, e: DrEvent, known?: Command[]): Promise<void> {
    if (e.commands_created_at === null || e.commands_announced_at !== null) return;
    const started = performance.now();
    const commands = known ?? (await this.commands.forEvent(trx, e.id));
    await this.commandWriter.announce(trx, commands, 'CREATED');
    await this.eventWriter.fanOutDone(trx, e, { commands_created_at: e.commands_created_at, commands_announced_at: this.clock() });
    this.logger.info({ event_id: e.id, commands: commands.length, ms: Math.round(performance.now() - started) }, 'commands announced (outbox)');
  }
}
