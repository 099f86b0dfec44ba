import type { DeviceStatusType, EventStatusType } from '@efs/api';
import type { Knex } from '@efs/db';
import { addScrapeGauges, meter, secondsHistogram } from '@efs/telemetry';

/** Acknowledgement time bounds, in seconds: a device cloud answers in seconds, or hours later for a device that was offline. */
const ACK_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400];

const STATUSES: readonly EventStatusType[] = ['UPCOMING', 'IN_PROGRESS', 'COMPLETED', 'CANCELED'];

const EVENTS = { name: 'efs.dispatch.events', description: 'Demand-response events, by status now', unit: '{event}' };

/** Runs `fn` once the outermost transaction `trx` belongs to has committed; never if it rolls back. */
function afterCommit(trx: Knex.Transaction, fn: () => void): void {
  let outer = trx;
  while (outer.parentTransaction) outer = outer.parentTransaction;
  outer.executionPromise.then(fn, () => undefined);
}

/**
 * event-dispatch's metrics: efs.dispatch.commands.created (once their transaction has committed),
 * efs.dispatch.commands.acknowledged (a device cloud said OK) and efs.dispatch.commands.failed
 * (it said FAILED_OFFLINE or FAILED_FAULT, as `device_status`), and
 * efs.dispatch.command.acknowledgement.duration_seconds, from a command's creation to its first
 * answer (OK or failed). Read at scrape time (`observeEvents`): efs.dispatch.events, the events in
 * each status now. Attribute objects are built here, once.
 */
export function dispatchMetrics() {
  const m = meter();
  const created = m.createCounter('efs.dispatch.commands.created', { description: 'Device commands created for demand-response events', unit: '{command}' });
  const acknowledged = m.createCounter('efs.dispatch.commands.acknowledged', { description: 'Device commands the device cloud acknowledged as scheduled (OK)', unit: '{command}' });
  const failed = m.createCounter('efs.dispatch.commands.failed', { description: 'Device commands the device cloud reported failed, by device_status', unit: '{command}' });
  const ackDuration = secondsHistogram('efs.dispatch.command.acknowledgement.duration_seconds', "Time from a command's creation to the device cloud's first answer (OK or failed)", ACK_BUCKETS);
  const service = { service: 'event-dispatch' };
  const failedAttrs: Partial<Record<DeviceStatusType, { service: string; device_status: DeviceStatusType }>> = {
    FAILED_OFFLINE: { ...service, device_status: 'FAILED_OFFLINE' },
    FAILED_FAULT: { ...service, device_status: 'FAILED_FAULT' },
  };
  const byStatus = Object.fromEntries(STATUSES.map((status) => [status, { ...service, status }])) as Record<EventStatusType, { service: string; status: EventStatusType }>;

  return {
    /** `n` commands inserted in `trx`: counted when it commits. */
    created(trx: Knex.Transaction, n: number): void {
      if (n > 0) afterCommit(trx, () => created.add(n, service));
    },

    /** A command's device status, changed and committed from `from` to `to`, `sinceCreatedMs` after its creation. */
    acknowledged(from: DeviceStatusType, to: DeviceStatusType, sinceCreatedMs: number): void {
      if (to === 'OK') acknowledged.add(1, service);
      const failure = failedAttrs[to];
      if (failure) failed.add(1, failure);
      if (from === 'PENDING' && to !== 'PENDING') ackDuration.record(Math.max(0, sinceCreatedMs / 1000), service);
    },

    /**
     * Reads the events by status at every scrape (addScrapeGauges) with `count`; answers the
     * function that stops reading. A scrape that comes while the previous one's count still runs
     * waits for that one; a count that fails or is slow leaves the series out of that scrape.
     */
    observeEvents(count: () => Promise<Record<EventStatusType, number>>): () => void {
      let counting: Promise<Record<EventStatusType, number>> | undefined;
      return addScrapeGauges(async (observe) => {
        counting ??= count().finally(() => (counting = undefined));
        const counts = await counting;
        for (const status of STATUSES) observe(EVENTS, counts[status], byStatus[status]);
      });
    },
  };
}

export type DispatchMetrics = ReturnType<typeof dispatchMetrics>;
