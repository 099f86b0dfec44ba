import { meter, type Attributes, type Counter } from '@efs/telemetry';

/** What one consumer group counts of one topic; its attributes are built once, so counting allocates nothing. */
export interface ConsumerCounters {
  /** Records the handler applied (an event), or requests answered. */
  handled(records: number): void;
  /** A handler attempt that failed (retried, or given up on); a failed batch is one. */
  failed(): void;
  /** A record sent to the topic's dead-letter topic (undecodable, not retriable, or out of attempts). */
  deadLettered(): void;
}

/**
 * The consumers' counters of a transport, labelled `consumer_group` and `topic` (the names without
 * a test's topic prefix; an in-memory read model's group without its per-process suffix):
 * efs.messaging.records.handled, efs.messaging.handler.errors, efs.messaging.records.dead_lettered.
 */
export class ConsumerMetrics {
  private readonly handled: Counter;
  private readonly errors: Counter;
  private readonly deadLettered: Counter;

  constructor() {
    const m = meter();
    this.handled = m.createCounter('efs.messaging.records.handled', { description: 'Records a consumer group handled (events applied, requests answered)', unit: '{record}' });
    this.errors = m.createCounter('efs.messaging.handler.errors', { description: 'Failed attempts of a consumer group\'s handler (each retry counts; a failed batch is one)', unit: '{error}' });
    this.deadLettered = m.createCounter('efs.messaging.records.dead_lettered', { description: 'Records a consumer group sent to the dead-letter topic', unit: '{record}' });
  }

  of(group: string, topic: string): ConsumerCounters {
    const attrs: Attributes = { consumer_group: group, topic };
    return {
      handled: (records) => this.handled.add(records, attrs),
      failed: () => this.errors.add(1, attrs),
      deadLettered: () => this.deadLettered.add(1, attrs),
    };
  }
}
