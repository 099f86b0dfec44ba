import type { Outbox } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { ProgramReadModel } from './programReadModel.ts';

/**
 * How a change of the catalog ends before it is answered: its announcement on the programs topic
 * is out, and the catalog's own read model shows it. Commissioning answers a commission's
 * eligibility from its read model of the topic once that has read the topic up to its end as of
 * a moment after the commission arrived, so a change answered before a commission is offered in
 * it, whichever replicas of the two services take part.
 */
export class ProgramWrites {
  readonly outbox: Outbox;
  private readonly opts: { programs: ProgramReadModel; timeoutMs: number; logger: Logger };

  constructor(opts: { outbox: Outbox; programs: ProgramReadModel; timeoutMs: number; logger: Logger }) {
    this.outbox = opts.outbox;
    this.opts = opts;
  }

  /**
   * Waits until the committed outbox rows `ids` are published, up to the timeout. The change is
   * committed either way, so a slow broker is logged, not answered as an error (which would invite
   * a second program): until the announcement is out, commissioning does not offer the change.
   */
  async published(ids: readonly string[]): Promise<void> {
    const { timeoutMs, logger } = this.opts;
    const out = await this.outbox.published(ids, timeoutMs).catch((err: Error) => {
      logger.error({ err }, 'could not learn whether a program announcement was published');
      return false;
    });
    if (!out) logger.warn({ outbox_ids: ids, timeout_ms: timeoutMs }, 'program announcement not published in time; answered anyway (committed): commissioning offers the change once it is out');
  }

  /** After a committed change: its announcement is out (or timed out) and the catalog's read model shows it. */
  async announced(ids: readonly string[]): Promise<void> {
    await this.published(ids);
    await this.opts.programs.changed();
  }
}
