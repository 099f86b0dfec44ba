import { CommandsTopic, deviceKey } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import type { DispatchMetrics } from '../dispatchMetrics.ts';
import { toCommandMessage, type Command, type CommandChange } from '../domain/command.ts';
import type { CommandStore } from './commandStore.ts';

interface CommandWriterDeps {
  store: CommandStore;
  outbox: Outbox;
  metrics: DispatchMetrics;
}

/**
 * Every write of commands goes through here, inside the caller's transaction: the rows and the
 * messages announcing them (keyed by device, so a device's commands stay in order) commit together.
 */
export class CommandWriter {
  private readonly deps: CommandWriterDeps;

  constructor(deps: CommandWriterDeps) {
    this.deps = deps;
  }

  /**
   * Inserts new commands (those already there are skipped); the caller announces them, in the
   * same transaction or, for a large fan-out, in the next one (see FanOut).
   */
  async insert(trx: Knex.Transaction, commands: readonly Command[]): Promise<Command[]> {
    const inserted = await this.deps.store.insertMany(trx, commands);
    this.deps.metrics.created(trx, inserted.length);
    return inserted;
  }

  /** Writes changed commands and announces each with `change`. */
  async update(trx: Knex.Transaction, commands: readonly Command[], change: CommandChange = 'UPDATED'): Promise<void> {
    if (commands.length === 0) return;
    await this.deps.store.updateMany(trx, commands);
    await this.announce(trx, commands, change);
  }

  async announce(trx: Knex.Transaction, commands: readonly Command[], change: CommandChange): Promise<void> {
    await this.deps.outbox.enqueueMany(trx, CommandsTopic, commands.map((c) => ({ key: deviceKey(c.integrator_id, c.site_id, c.device_id), value: toCommandMessage(c, change) })));
  }
}
