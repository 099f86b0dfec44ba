import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import { PeriodicTask, untilDue, type Clock, type NextDueMs } from '@efs/runtime';
import type { DispatchContext } from '../context.ts';
import { duePhases, phaseDueAt, type Command } from '../domain/command.ts';
import type { CommandStore } from '../store/commandStore.ts';
import type { CommandWriter } from '../store/commandWriter.ts';
import type { EventStore } from '../store/eventStore.ts';
import type { EventWriter } from '../store/eventWriter.ts';
import type { FanOut } from '../store/fanOut.ts';

const EVENT_BATCH = 100;
const COMMAND_BATCH = 2000;
/** An event whose commands are still missing this long after creation is fanned out here (its message was lost or dead-lettered). */
const FAN_OUT_GRACE_MS = 30_000;

/**
 * Moves what time moves: events UPCOMING → IN_PROGRESS → COMPLETED, commands announced as started
 * and ended. It runs once at start (so a transition due while the service was down is applied
 * before it serves), then sleeps until the next transition it knows of falls due, is woken by
 * this process's own commits (a new event or command may be due sooner), and at the latest every
 * `pollMs` (what another replica or the CLI wrote). Safe with several replicas: each batch is
 * locked with FOR UPDATE SKIP LOCKED, so one of them applies a given transition.
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

  constructor(opts: Pick<DispatchContext, 'knex' | 'events' | 'commands' | 'eventWriter' | 'commandWriter' | 'fanOut' | 'clock' | 'logger'> & { pollMs: number }) {
    this.knex = opts.knex;
    this.events = opts.events;
    this.commands = opts.commands;
    this.eventWriter = opts.eventWriter;
    this.commandWriter = opts.commandWriter;
    this.fanOut = opts.fanOut;
    this.clock = opts.clock;
    this.logger = opts.logger.child({ component: 'scheduler' });
    this.task = new PeriodicTask({ run: () => this.runAndPlan(), pollMs: opts.pollMs, logger: this.logger, what: 'scheduler run' });
  }

  start(): void {
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** Something may be due sooner than planned (this process committed an event or commands). */
  wake(): void {
    this.task.wake();
  }

  /** Applies everything due now; returns how many events and commands moved. */
  async runOnce(): Promise<{ events: number; commands: number; fannedOut: number }> {
    return (await this.apply()).moved;
  }

  /** A run of the task: applies what is due and answers how long until the next known transition. */
  private async runAndPlan(): Promise<NextDueMs> {
    const started = this.clock();
    const { next } = await this.apply();
    return untilDue(next, started, this.clock());
  }

  /** Applies what is due now; answers what moved and when the next known work falls due (at the latest a day from now). */
  private async apply(): Promise<{ moved: { events: number; commands: number; fannedOut: number }; next: Date }> {
    const now = this.clock();
    // Most runs find nothing due: two indexed reads of the next due times instead of a locking transaction.
    let due = await this.nextDue();
    let events = 0;
    if (due.transitionAt && due.transitionAt <= now) for (;;) {
      const n = await this.knex.transaction(async (trx) => {
        const batch = await this.events.lockDueTransitions(trx, now, EVENT_BATCH);
        for (const e of batch) await this.eventWriter.advance(trx, e, now);
        return batch.length;
      });
      events += n;
      if (n < EVENT_BATCH) break;
    }
    let commands = 0;
    if (due.phaseAt && due.phaseAt <= now) for (;;) {
      const n = await this.knex.transaction(async (trx) => {
        const batch = await this.commands.lockDuePhases(trx, now, COMMAND_BATCH);
        const started: Command[] = [];
        const ended: Command[] = [];
        const next = batch.map((c) => {
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
        return batch.length;
      });
      commands += n;
      if (n < COMMAND_BATCH) break;
    }
    let fannedOut = 0;
    if (due.fanOutAt && due.fanOutAt <= now) {
      for (const id of await this.events.pendingFanOut(this.knex, new Date(now.getTime() - FAN_OUT_GRACE_MS), 10)) {
        await this.fanOut.run(id);
        fannedOut++;
      }
    }
    if (events + commands + fannedOut > 0) {
      this.logger.debug({ events, commands, fanned_out: fannedOut }, 'scheduled changes applied');
      due = await this.nextDue();
    }
    return { moved: { events, commands, fannedOut }, next: earliest([due.transitionAt, due.phaseAt, due.fanOutAt], new Date(now.getTime() + 86_400_000)) };
  }

  private async nextDue(): Promise<{ transitionAt: Date | null; phaseAt: Date | null; fanOutAt: Date | null }> {
    const [{ transitionAt, unannouncedSince }, phaseAt] = await Promise.all([this.events.nextDue(this.knex), this.commands.nextPhaseDueAt(this.knex)]);
    // An event's commands are fanned out here once they are still missing FAN_OUT_GRACE_MS after its creation.
    const fanOutAt = unannouncedSince ? new Date(unannouncedSince.getTime() + FAN_OUT_GRACE_MS) : null;
    return { transitionAt, phaseAt, fanOutAt };
  }
}

const earliest = (dates: readonly (Date | null)[], otherwise: Date): Date => dates.reduce<Date>((a, d) => (d && d < a ? d : a), otherwise);
