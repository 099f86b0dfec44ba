import { compositeKey, defineTopic } from './topic.ts';

const nullable = <const N extends string, const T extends string>(name: N, type: T) => ({ name, type: ['null', type], default: null }) as const;

/**
 * One accepted telemetry reading, produced by the gateway once it has validated the item and
 * found the device among the integrator's; it travels in a ReadingBatch on the partition of its key
 * `<integrator_id>/<device_id>`, so that a device's readings keep their order. An INTERVAL reading is an item of POST /v1/telemetry/BATTERY (the
 * period starting at `start_time`); a COUNTER reading is an item of BATTERY_COUNTER (lifetime
 * counters at `start_time`), which telemetry-ingest turns into intervals. Times travel as ISO-8601
 * text (with milliseconds), as every timestamp does; `received_at` is when the gateway accepted
 * the reading: the later of two readings for the same device and start replaces the earlier.
 * Readings are numbers (Avro double), which the entity field definitions do not describe.
 */
export const ReadingSchema = {
  type: 'record',
  name: 'Reading',
  namespace: 'efs.telemetry',
  fields: [
    { name: 'integrator_id', type: 'string' },
    { name: 'site_id', type: 'string' },
    { name: 'device_id', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'ReadingKind', namespace: 'efs.telemetry', symbols: ['INTERVAL', 'COUNTER'] } },
    { name: 'start_time', type: 'string', doc: 'ISO-8601: start of an INTERVAL, timestamp of a COUNTER reading' },
    nullable('duration_s', 'double'),
    { name: 'received_at', type: 'string', doc: 'ISO-8601 (milliseconds): when the gateway accepted the reading' },
    nullable('last_is_online', 'boolean'),
    nullable('last_mode', 'string'),
    nullable('battery_last_power_charge_w', 'double'),
    nullable('battery_last_power_discharge_w', 'double'),
    nullable('battery_total_energy_charge_wh', 'double'),
    nullable('battery_total_energy_discharge_wh', 'double'),
    nullable('battery_last_stored_energy_wh', 'double'),
    nullable('battery_last_capacity_energy_wh', 'double'),
    nullable('battery_last_state_of_charge_percentage', 'double'),
    nullable('battery_last_state_of_health_percentage', 'double'),
    nullable('battery_last_backup_reserve_percentage', 'double'),
    nullable('last_is_grid_online', 'boolean'),
    nullable('home_total_energy_wh', 'double'),
    nullable('home_last_power_w', 'double'),
    nullable('solar_total_energy_wh', 'double'),
    nullable('solar_last_power_w', 'double'),
    { name: 'oem_raw_data', type: ['null', 'string'], default: null, doc: 'JSON text of the object the device cloud sent' },
    nullable('battery_lifetime_energy_charge_wh', 'double'),
    nullable('battery_lifetime_energy_discharge_wh', 'double'),
  ],
} as const;

/**
 * The accepted readings of one request that fall on one partition of the readings topic: one
 * Kafka record carries many readings, so that the per-record costs (producer encoding, the
 * broker's validation, the consumers' decoding) are paid per request and partition, not per
 * reading. The gateway sends each record explicitly to the partition that the device key
 * (`readingKey`) hashes to with Kafka's default partitioner, so every reading of a device still
 * lands on the same partition in order, whichever record carries it.
 */
export const ReadingBatchSchema = {
  type: 'record',
  name: 'ReadingBatch',
  namespace: 'efs.telemetry',
  fields: [{ name: 'readings', type: { type: 'array', items: ReadingSchema } }],
} as const;

/**
 * Accepted readings on their way to telemetry-ingest, a ReadingBatch a record. The gateway writes
 * here directly (no request/reply: the write only needs to be durable); telemetry-ingest consumes
 * it in batches. The partition count here is the default; `TELEMETRY_PARTITIONS` sets it per
 * deployment. (Its own name: the topic of one reading a record, efs.telemetry.readings, had a
 * value schema that a batch is not compatible with.)
 */
export const ReadingsTopic = defineTopic({
  name: 'efs.telemetry.reading-batches',
  kind: 'event',
  partitions: 12,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  schema: ReadingBatchSchema,
});

/** The key a reading's partition is chosen by (the partitioner's input; one record's readings share a partition). */
const DAY_MS = 24 * 3600 * 1000;

/**
 * TELEMETRY_RETENTION_DAYS: readings are kept for today and that many whole UTC days before it.
 * The first instant still kept at `now` (a reading that starts earlier is refused by the gateway,
 * and its day's partitions are dropped by telemetry-ingest).
 */
export const retentionStart = (now: number, days: number): number => Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS;

export const readingKey = (integratorId: string, deviceId: string) => compositeKey(integratorId, deviceId);
