import { AppError, isDependencyUnavailable, isRetriable } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { type BatchHandler, type Delivered, type EventHandler } from './transport.ts';

export interface DeliveryOutcome {
  ok: boolean;
  /** Why the message was given up on; set when ok is false. */
  reason?: string;
  attempts: number;
}

export interface DeliveryOptions {
  maxAttempts: number;
  logger: Logger;
  baseDelayMs?: number;
  isStopping?: () => boolean;
  /** Called for each failed call of the handler (a consumer's handler-error counter). */
  onError?: () => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs an event handler with the retry rule both transports share: a failure that is not
 * retriable (a NonRetriableError, a 4xx AppError, a ZodError: see isRetriable) gives up at once;
 * any other backs off (exponential, with jitter) and retries up to maxAttempts. A failure because
 * a dependency is unavailable (the database restarting: isDependencyUnavailable) is not counted:
 * the handler is tried again, at most every UNAVAILABLE_RETRY_MAX_MS, until it is back or the
 * transport stops, so an outage dead-letters nothing.
 * A message given up on is the caller's to dead-letter; it is never silently dropped.
 */
export async function deliverWithRetry<T>(
  handler: EventHandler<T>,
  message: Delivered<T>,
  opts: DeliveryOptions,
): Promise<DeliveryOutcome> {
  const base = opts.baseDelayMs ?? 100;
  // Failures while a dependency is unavailable are not the message's: they are not counted.
  let counted = 0;
  let waitingSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      await handler(message);
      if (waitingSince !== undefined) opts.logger.info({ topic: message.meta.topic, message_id: message.meta.id, waited_ms: Date.now() - waitingSince }, 'handler succeeded once its dependency was back');
      return { ok: true, attempts: attempt };
    } catch (err) {
      const e = err as Error;
      opts.onError?.();
      if (isDependencyUnavailable(err)) {
        if (opts.isStopping?.()) throw err;
        if (waitingSince === undefined) {
          waitingSince = Date.now();
          opts.logger.warn({ err: e, topic: message.meta.topic, message_id: message.meta.id }, 'a dependency of the handler is unavailable; retrying until it is back');
        }
        await sleep(Math.min(base * 2 ** Math.min(attempt - 1, 20), UNAVAILABLE_RETRY_MAX_MS) * (0.5 + Math.random() / 2));
        continue;
      }
      counted++;
      const retriable = isRetriable(err);
      const final = !retriable || counted >= opts.maxAttempts;
      opts.logger.warn(
        { err: e, topic: message.meta.topic, message_id: message.meta.id, attempt, retriable, final },
        final ? 'handler failed; dead-lettering the message' : 'handler failed; retrying',
      );
      if (final) return { ok: false, reason: reasonOf(e), attempts: attempt };
      if (opts.isStopping?.()) throw err;
      await sleep(Math.min(base * 2 ** (counted - 1), 10_000) * (0.5 + Math.random() / 2));
    }
  }
}

/** The longest wait between attempts while a dependency is unavailable: how late a consumer notices it is back. */
const UNAVAILABLE_RETRY_MAX_MS = 2000;

/** The dead-letter reason: the error's kind (and catalogue code) and message. */
function reasonOf(e: Error): string {
  return e instanceof AppError ? `${e.name} ${e.code}: ${e.message}` : `${e.name}: ${e.message}`;
}

/**
 * Runs a batch handler with the same retry rule. A batch given up on is retried one message at a
 * time (a single bad message must not dead-letter its neighbours); answers the messages that
 * failed on their own, with the reason, for the caller to dead-letter.
 */
export async function deliverBatchWithRetry<T>(
  handler: BatchHandler<T>,
  messages: Delivered<T>[],
  opts: DeliveryOptions,
): Promise<{ message: Delivered<T>; reason: string }[]> {
  if (messages.length === 0) return [];
  const first = messages[0]!;
  const whole: Delivered<Delivered<T>[]> = { value: messages, meta: { ...first.meta, id: `${messages.length} messages from ${first.meta.id}` } };
  const outcome = await deliverWithRetry(async (m) => handler(m.value), whole, opts);
  if (outcome.ok) return [];
  if (messages.length === 1) return [{ message: first, reason: outcome.reason ?? 'failed' }];
  const failed: { message: Delivered<T>; reason: string }[] = [];
  for (const m of messages) {
    const one = await deliverWithRetry(async (x) => handler([x]), m, opts);
    if (!one.ok) failed.push({ message: m, reason: one.reason ?? 'failed' });
  }
  return failed;
}
