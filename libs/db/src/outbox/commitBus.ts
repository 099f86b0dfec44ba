import type { Logger } from '@efs/logging';

/**
 * Who wants to know that this process committed events to its outbox (a scheduler sleeping until
 * its next due row): listeners called in order, outside the writer's request. A listener's
 * exception is logged, never thrown to the writer.
 */
export class CommitBus {
  private readonly listeners: (() => void)[] = [];
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  on(listener: () => void): void {
    this.listeners.push(listener);
  }

  emit(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err }, 'an outbox commit listener failed');
      }
    }
  }
}
