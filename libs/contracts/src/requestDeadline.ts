import { AsyncLocalStorage } from 'node:async_hooks';
import { Errors } from '@efs/errors';

/**
 * The deadline of the request being handled, carried through its async work: a service's operation
 * router sets it from the request's `efs-deadline` header, and what the request does reads it.
 * Calls to other services wait no longer than it, and no change is committed after it (the outbox
 * refuses to enqueue past it), so a caller that gave up on a request can tell its client that
 * nothing was done. Work a request starts but does not wait for (an outbox relay's kick, a
 * consumer's queue) runs `outsideRequest`, free of it.
 */
const current = new AsyncLocalStorage<number>();

/** Runs fn with `deadline` (epoch ms) as the current request's deadline. */
export function withRequestDeadline<R>(deadline: number, fn: () => R): R {
  return current.run(deadline, fn);
}

/** The current request's deadline (epoch ms), or undefined outside a request. */
export function requestDeadline(): number | undefined {
  return current.getStore();
}

/**
 * Runs fn free of the current request's deadline (background work the request only starts).
 * Outside a request it just runs fn: leaving a context costs a context frame of its own.
 */
export function outsideRequest<R>(fn: () => R): R {
  return current.getStore() === undefined ? fn() : current.exit(fn);
}

/** Whether a deadline taken from a message header (epoch ms as text, absent: none) has passed. */
export function deadlinePassed(header: string | undefined, now = Date.now()): boolean {
  const deadline = Number(header ?? 0);
  return Number.isFinite(deadline) && deadline > 0 && now > deadline;
}

/**
 * Throws SERVICE_UNAVAILABLE when the current request's deadline has passed: `what` is about to
 * be stored, and the caller has stopped waiting (or is about to), so it must not be.
 */
export function assertBeforeRequestDeadline(what: string): void {
  const deadline = current.getStore();
  if (deadline !== undefined && Date.now() > deadline) throw pastDeadlineError(what);
}

/**
 * The SERVICE_UNAVAILABLE a write answers when its request's deadline passed before `what` was
 * stored: for work that found the deadline passed by a clock reading of its own (a batch of
 * writes read the time once), so the answer does not hang on reading the clock again.
 */
export function pastDeadlineError(what: string): Error {
  return Errors.SERVICE_UNAVAILABLE(`The request passed its deadline before ${what} was stored; nothing was stored, retry later`);
}
