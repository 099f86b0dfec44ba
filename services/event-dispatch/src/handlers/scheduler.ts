import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { PeriodicTask } from '@efs/runtime';
import type { Clock } from '../domain/clock.ts';
import type { CommandWriter } from '../store/commandWriter.ts';
import { duePhases, phaseDueAt, type Command } from '../domain/command.ts';
import type { EventWriter } from '../store/eventWriter.ts';
import type { FanOut } from '../store/fanOut.ts';
import type { CommandStore } from '../store/commandStore.ts';
import type { EventStore } from '../store/eventStore.ts';

const EVENT_BATCH = 100;
const COMMAND_BATCH = 2000;
/** An event whose commands are still missing this long after creation is fanned out here (its message was lost or dead-lettered). */
const FAN_OUT_GRACE_MS = 30_000;

/**
 * Moves what time moves, every `pollMs` and once at start (so a transition due while the service
 * was down is applied before it serves): events UPCOMING → IN_PROGRESS → COMPLETED, commands
 * announced as started and ended. Safe with several replicas: each batch is locked with FOR
 * UPDATE SKIP LOCKED, so one of them applies a given transition.
 */
export class Scheduler {
  private readonly task: PeriodicTask;
  private readonly knex: Knex;
  private readonly events: EventStore;
  private readonly commands: CommandStore;
  private readonly eventWriter: EventWriter;
  private readonly commandWriter: CommandWriter;
  private readonly fanOut: FanOut;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; events: EventStore; commands: CommandStore; eventWriter: EventWriter; commandWriter: CommandWriter; fanOut: FanOut; clock: Clock; logger: Logger; pollMs: number }) {
    this.knex = opts.knex;
    this.events = opts.events;
    this.commands = opts.commands;
    this.eventWriter = opts.eventWriter;
    this.commandWriter = opts.commandWriter;
    this.fanOut = opts.fanOut;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'scheduler' });
    this.task = new PeriodicTask({ run: () => this.runOnce(), pollMs: opts.pollMs, logger: this.logger, what: 'scheduler run' });
  }

  start(): void {
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** Applies everything due now; returns how many events and commands moved. */
  async runOnce(): Promise<{ events: number; commands: number; fannedOut: number }> {
    const now = this.clock();
    // Most runs find nothing due: an indexed read each instead of a locking transaction each.
    let events = 0;
    if (await this.events.transitionDue(this.knex, now)) for (;;) {
      const n = await this.knex.transaction(async (trx) => {
        const due = await this.events.lockDueTransitions(trx, now, EVENT_BATCH);
        for (const e of due) await this.eventWriter.advance(trx, e, now);
        return due.length;
      });
      events += n;
      if (n < EVENT_BATCH) break;
    }
    let commands = 0;
    if (await this.commands.phaseDue(this.knex, now)) for (;;) {
      const n = await this.knex.transaction(async (trx) => {
        const due = await this.commands.lockDuePhases(trx, now, COMMAND_BATCH);
        const started: Command[] = [];
        const ended: Command[] = [];
        const next = due.map((c) => {
          const phases = duePhases(c, now);
          const moved: Command = { ...c, phase: phases.at(-1) ?? c.phase };
          moved.phase_due_at = phaseDueAt(moved);
          if (phases.includes('STARTED')) started.push(moved);
          if (phases.includes('ENDED')) ended.push(moved);
          return moved;
        });
        await this.commands.updateMany(trx, next);
        await this.commandWriter.announce(trx, started, 'STARTED');
        await this.commandWriter.announce(trx, ended, 'ENDED');
        return due.length;
      });
      commands += n;
      if (n < COMMAND_BATCH) break;
    }
    let fannedOut = 0;
    for (const id of await this.events.pendingFanOut(this.knex, new Date(now.getTime() - FAN_OUT_GRACE_MS), 10)) {
      await this.fanOut.run(id);
      fannedOut++;
    }
    if (events + commands + fannedOut > 0) this.logger.debug({ events, commands, fanned_out: fannedOut }, 'scheduled changes applied');
    return { events, commands, fannedOut };
  }
}
