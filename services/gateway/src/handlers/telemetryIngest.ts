import { BatteryCounterItem, BatteryTelemetryItem, type TelemetryIngestResponseType } from '@efs/api';
import { ReadingsTopic, readingKey, type Principal, type ReadingMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';
import type { DeviceDirectory } from '../telemetry/deviceDirectory.ts';
import { fastItemCheck } from '../telemetry/itemCheck.ts';
import { readingCounters } from '../telemetry/readingCounters.ts';
import { counterReading, intervalReading, itemError, ReadingTimes, readingTimeProblem } from '../telemetry/readings.ts';

type Result = TelemetryIngestResponseType['results'][number];

/** Each kind's item schema, and its check without zod's walk for the usual item (zod answers the rest). */
const itemSchemas = {
  INTERVAL: { schema: BatteryTelemetryItem, fast: fastItemCheck(BatteryTelemetryItem) },
  COUNTER: { schema: BatteryCounterItem, fast: fastItemCheck(BatteryCounterItem) },
} as const;

/**
 * The readings as one message per partition they hash to (by device key), in request order
 * within each: the topic's records are ReadingBatches, so the producer, the broker and the
 * consumers handle a dozen records a request rather than a thousand.
 */
function byPartition(readings: readonly { key: string; value: ReadingMessage }[], partitionOf: (key: string) => number) {
  const out = new Map<number, { key: string; partition: number; value: { readings: ReadingMessage[] } }>();
  for (const r of readings) {
    const partition = partitionOf(r.key);
    const m = out.get(partition);
    if (m) m.value.readings.push(r.value);
    else out.set(partition, { key: r.key, partition, value: { readings: [r.value] } });
  }
  return [...out.values()];
}

/**
 * `POST /v1/telemetry/BATTERY` (and `/v1/telemetry`), `POST /v1/telemetry/BATTERY_COUNTER`: each
 * item is validated and its device looked up among the integrator's (the in-memory directory);
 * the good ones are produced to the readings topic, one record per partition their devices hash
 * to, and the answer waits for the broker's acknowledgement of all of them. No acknowledgement in time answers 503 and the whole
 * batch should be resent: a reading that was written anyway is replaced by its resend.
 */
export function telemetryIngestHandler(deps: { transport: Transport; directory: DeviceDirectory; timeoutMs: number; telemetryRetentionDays: number | undefined }) {
  const counters = { INTERVAL: readingCounters('INTERVAL'), COUNTER: readingCounters('COUNTER') } as const;
  return async (principal: Principal, kind: ReadingMessage['kind'], items: readonly unknown[]): Promise<TelemetryIngestResponseType> => {
    const { schema, fast } = itemSchemas[kind];
    const count = counters[kind];
    const integratorId = principal.integrator_id!;
    const now = Date.now();
    const receivedAt = new Date(now).toISOString();
    const times = new ReadingTimes();
    const results: Result[] = [];
    const readings: { key: string; value: ReadingMessage }[] = [];
    const refused = { invalid: 0, unknown_device: 0, time_out_of_range: 0 };
    const refuse = (reason: keyof typeof refused, index: number, errors: Result['errors']) => {
      refused[reason]++;
      results.push({ index, status: 'FAILED', errors });
    };
    items.forEach((raw, index) => {
      let item = fast(raw);
      if (!item) {
        const parsed = schema.safeParse(raw);
        if (!parsed.success) return refuse('invalid', index, parsed.error.issues.map((i) => itemError(index, i)));
        item = parsed.data;
      }
      const siteId = deps.directory.siteOf(integratorId, item.device_id);
      if (!siteId) return refuse('unknown_device', index, [itemError(index, { message: `Device ${item.device_id} is not a commissioned device of this integrator`, path: ['device_id'] })]);
      const origin = { integratorId, siteId, receivedAt, times };
      const value = 'timestamp' in item ? counterReading(item, origin) : intervalReading(item, origin);
      const timeProblem = readingTimeProblem(times.of(value.start_time).ms, now, deps.telemetryRetentionDays);
      if (timeProblem) return refuse('time_out_of_range', index, [itemError(index, { message: timeProblem, path: ['timestamp' in item ? 'timestamp' : 'start_time'] })]);
      readings.push({ key: readingKey(integratorId, item.device_id), value });
      results.push({ index, status: 'OK' });
    });
    count.rejected(refused.invalid, 'invalid');
    count.rejected(refused.unknown_device, 'unknown_device');
    count.rejected(refused.time_out_of_range, 'time_out_of_range');
    if (readings.length > 0) {
      try {
        // One deadline for both: learning the partition count (at once unless the process has never asked) and the acknowledgement.
        const deadline = Date.now() + deps.timeoutMs;
        const partitionOf = await deps.transport.partitioner(ReadingsTopic, { timeoutMs: deps.timeoutMs });
        await deps.transport.publishBatch(ReadingsTopic, byPartition(readings, partitionOf), { timeoutMs: Math.max(1, deadline - Date.now()) });
        count.accepted(readings.length);
      } catch (err) {
        if (!(err instanceof ServiceUnavailableError)) throw err;
        count.rejected(readings.length, 'unavailable');
        throw Errors.SERVICE_UNAVAILABLE('Telemetry could not be stored right now; resend the batch', { cause: err });
      }
    }
    return { results };
  };
}
