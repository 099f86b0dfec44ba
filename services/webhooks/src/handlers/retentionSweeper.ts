import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { KnexMessageStore } from '../store/messageStore.ts';

/** Messages removed per transaction, so that a large backlog never holds long locks. */
const SWEEP_CHUNK = 5000;

/**
 * Keeps the webhooks schema from growing without end: every `everyMs` it removes the messages
 * stored longer than `retentionMs` ago whose deliveries are all finished, with those deliveries and their
 * attempts, a chunk per transaction until none is left. Replicas may sweep at once: each skips
 * what another holds.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private running: Promise<number> | undefined;
  private readonly o: { knex: Knex; messages: KnexMessageStore; clock: Clock; logger: Logger; retentionMs: number; everyMs: number };

  constructor(o: { knex: Knex; messages: KnexMessageStore; clock: Clock; logger: Logger; retentionMs: number; everyMs: number }) {
    this.o = o;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep().catch((err: Error) => this.o.logger.warn({ err }, 'removing old webhook messages failed; will retry')), this.o.everyMs);
    this.timer.unref();
  }

  /** Stops after the chunk in hand (a first sweep of a large backlog can take minutes). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Removes what is past retention now; answers how many messages went. One sweep at a time. */
  sweep(): Promise<number> {
    this.running ??= this.removeAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async removeAll(): Promise<number> {
    const before = new Date(this.o.clock().getTime() - this.o.retentionMs);
    let removed = 0;
    while (!this.stopping) {
      const chunk = await this.o.messages.removeOlderThan(this.o.knex, before, SWEEP_CHUNK);
      removed += chunk.removed;
      if (chunk.examined < SWEEP_CHUNK) break;
    }
    if (removed > 0) this.o.logger.info({ removed, before: before.toISOString() }, 'removed webhook messages past retention');
    return removed;
  }
}
