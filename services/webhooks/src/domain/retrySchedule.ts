/** How long each unit lasts, in milliseconds. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** One duration: a whole number and a unit (`500ms`, `5s`, `5m`, `2h`, `3d`). */
export function parseDuration(text: string): number {
  const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new Error(`"${text.trim()}" is not a duration like 5s, 5m, 2h or 3d`);
  const ms = Number(m[1]) * UNITS[m[2]!]!;
  if (ms <= 0) throw new Error(`"${text.trim()}" must be longer than zero`);
  return ms;
}

/**
 * `WEBHOOK_RETRY_SCHEDULE`: comma-separated waits before each retry (the first after the first
 * failed attempt). A message is given up once every retry has failed.
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new Error('at least one retry delay is required');
  if (parts.length > 50) throw new Error('at most 50 retries');
  return parts.map(parseDuration);
}

/** Share of a delay by which a retry moves at random, either way, so that failed endpoints' retries spread out. */
export const JITTER = 0.2;

/**
 * When the next attempt is due after `failedAttempts` attempts have failed, or null when the
 * schedule is exhausted (the message is given up). `random` is in [0, 1).
 */
export function nextAttemptDelay(schedule: readonly number[], failedAttempts: number, random: number = Math.random()): number | null {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random)));
}

/** What an attempt's answer means for its delivery: done, retried at a time, or given up. */
export interface AttemptOutcome {
  succeeded: boolean;
  status: 'succeeded' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  /** 410 Gone: the endpoint is disabled at once. */
  gone: boolean;
}

/**
 * Any 2xx is a success; anything else (another status, no answer, a refused destination) is a
 * failure, retried on the schedule (jittered) until it is exhausted. A 410 also disables the
 * endpoint; the delivery stays queued, so re-enabling the endpoint sends it.
 */
export function attemptOutcome(responseStatus: number | null, attemptsBefore: number, schedule: readonly number[], now: Date, random: number = Math.random()): AttemptOutcome {
  if (responseStatus !== null && responseStatus >= 200 && responseStatus < 300) return { succeeded: true, status: 'succeeded', nextAttemptAt: null, gone: false };
  const delay = nextAttemptDelay(schedule, attemptsBefore + 1, random);
  const gone = responseStatus === 410;
  if (delay === null) return { succeeded: false, status: 'failed', nextAttemptAt: null, gone };
  return { succeeded: false, status: 'pending', nextAttemptAt: new Date(now.getTime() + delay), gone };
}
