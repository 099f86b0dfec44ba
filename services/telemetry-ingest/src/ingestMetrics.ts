import type { ReadingMessage } from '@efs/contracts';
import { meter, secondsHistogram } from '@efs/telemetry';

/** Ingest lag bounds, in seconds: from under a second (the usual) to an hour; the alert's 5 minutes is one of them. */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * What telemetry-ingest stores, counted once a write has committed: efs.telemetry.readings.stored
 * (by kind), and efs.telemetry.ingest.lag_seconds, the time from the gateway's acceptance of a
 * reading (its `received_at`) to its storage. The readings of one request share their acceptance
 * time and travel together, so the lag is observed once per run of readings with the same
 * `received_at` (a request's share of the write), not once per reading: a write of a thousand
 * readings costs a few observations. Attribute objects are built here, once.
 */
export function ingestMetrics() {
  const m = meter();
  const storedCounter = m.createCounter('efs.telemetry.readings.stored', { description: 'Readings stored by telemetry-ingest, by kind', unit: '{reading}' });
  const lag = secondsHistogram('efs.telemetry.ingest.lag_seconds', "Time from a reading's acceptance by the gateway to its storage (once per request's readings in a write)", LAG_BUCKETS);
  const service = { service: 'telemetry-ingest' };
  const interval = { ...service, kind: 'INTERVAL' };
  const counter = { ...service, kind: 'COUNTER' };

  return {
    /** Readings whose write has just committed, at `now` (epoch ms). */
    stored(readings: readonly ReadingMessage[], now: number): void {
      let intervals = 0;
      let previous: string | undefined;
      for (const r of readings) {
        if (r.kind === 'INTERVAL') intervals++;
        if (r.received_at === previous) continue;
        previous = r.received_at;
        const at = Date.parse(r.received_at);
        if (Number.isFinite(at)) lag.record(Math.max(0, (now - at) / 1000), service);
      }
      if (intervals > 0) storedCounter.add(intervals, interval);
      if (readings.length > intervals) storedCounter.add(readings.length - intervals, counter);
    },
  };
}
