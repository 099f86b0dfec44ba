import type { Logger } from '@efs/logging';
import { NonRetriableError, type Delivered, type EventHandler } from './transport.ts';

export interface DeliveryOutcome {
  ok: boolean;
  /** Why the message was given up on; set when ok is false. */
  reason?: string;
  attempts: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs an event handler with the retry rule both transports share: a NonRetriableError gives up
 * at once, any other error backs off (exponential, with jitter) and retries up to maxAttempts.
 * A message given up on is the caller's to dead-letter; it is never silently dropped.
 */
export async function deliverWithRetry<T>(
  handler: EventHandler<T>,
  message: Delivered<T>,
  opts: { maxAttempts: number; logger: Logger; baseDelayMs?: number; isStopping?: () => boolean },
): Promise<DeliveryOutcome> {
  const base = opts.baseDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      await handler(message);
      return { ok: true, attempts: attempt };
    } catch (err) {
      const e = err as Error;
      const final = err instanceof NonRetriableError || attempt >= opts.maxAttempts;
      opts.logger.warn(
        { err: e, topic: message.meta.topic, message_id: message.meta.id, attempt, final },
        final ? 'handler failed; dead-lettering the message' : 'handler failed; retrying',
      );
      if (final) return { ok: false, reason: `${e.name}: ${e.message}`, attempts: attempt };
      if (opts.isStopping?.()) throw err;
      await sleep(Math.min(base * 2 ** (attempt - 1), 10_000) * (0.5 + Math.random() / 2));
    }
  }
}
