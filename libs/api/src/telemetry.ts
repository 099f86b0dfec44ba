import { z } from 'zod';
import { DateTime } from './common.ts';
import { ExternalId } from './sites.ts';
import { MAX_ACTIONS } from '@efs/contracts';

/** A reading: a number 0 or more, null or absent when the device did not report it. */
const reading = () => z.number().min(0).nullable().optional();
const percentage = () => z.number().min(0).max(100).nullable().optional();

/** Most telemetry items per request (decisions.md, Telemetry); more answer 400. */
export const MAX_TELEMETRY_ITEMS = 1000;

/** An item of `POST /v1/telemetry/BATTERY` (and the legacy `POST /v1/telemetry`). */
export const BatteryTelemetryItem = z
  .object({
    device_id: ExternalId,
    start_time: DateTime,
    duration_s: z.number().positive().max(31 * 24 * 3600),
    last_is_online: z.boolean().nullable().optional(),
    last_mode: z.string().max(64).nullable().optional(),
    battery_last_power_charge_w: reading(),
    battery_last_power_discharge_w: reading(),
    battery_total_energy_charge_wh: reading(),
    battery_total_energy_discharge_wh: reading(),
    battery_last_stored_energy_wh: reading(),
    battery_last_capacity_energy_wh: reading(),
    battery_last_state_of_charge_percentage: percentage(),
    battery_last_state_of_health_percentage: percentage(),
    /** Deprecated, still accepted. */
    battery_last_backup_reserve_percentage: percentage(),
    last_is_grid_online: z.boolean().nullable().optional(),
    home_total_energy_wh: reading(),
    home_last_power_w: reading(),
    solar_total_energy_wh: reading(),
    solar_last_power_w: reading(),
    oem_raw_data: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .meta({ id: 'BatteryTelemetryItem' });
export type BatteryTelemetryItemType = z.infer<typeof BatteryTelemetryItem>;

/** An item of `POST /v1/telemetry/BATTERY_COUNTER`: monotonic lifetime counters at a moment. */
export const BatteryCounterItem = z
  .object({
    device_id: ExternalId,
    timestamp: DateTime,
    battery_lifetime_energy_charge_wh: z.number().min(0),
    battery_lifetime_energy_discharge_wh: z.number().min(0),
    battery_state_of_charge_percentage: percentage(),
  })
  .meta({ id: 'BatteryCounterItem' });
export type BatteryCounterItemType = z.infer<typeof BatteryCounterItem>;

/**
 * The request body of every ingest route. Items are checked one by one after the envelope (a bad
 * item is FAILED in the results, it never rejects the batch), so the envelope takes any value.
 */
export const TelemetryBatch = z.object({
  telemetry: z
    .array(z.unknown().describe('A BatteryTelemetryItem (BATTERY) or a BatteryCounterItem (BATTERY_COUNTER); each is validated on its own.'))
    .max(MAX_TELEMETRY_ITEMS),
});

export const TelemetryItemError = z.object({ message: z.string(), path: z.string() });

export const TelemetryIngestResponse = z
  .object({
    results: z.array(
      z.object({
        index: z.number().int().min(0),
        status: z.enum(['OK', 'FAILED']),
        errors: z.array(TelemetryItemError).optional(),
      }),
    ),
  })
  .meta({ id: 'TelemetryIngestResponse' });
export type TelemetryIngestResponseType = z.infer<typeof TelemetryIngestResponse>;

/**
 * Page size of the utility reads: 1,000 rows (about half a megabyte of JSON) by default and at
 * most, like every list; a page travels back from telemetry-ingest as one reply message, which
 * Kafka keeps under a megabyte.
 */
export const TELEMETRY_PAGE_MAX = 1000;

const page = {
  limit: z.number().int().min(1).max(TELEMETRY_PAGE_MAX).default(TELEMETRY_PAGE_MAX),
  /** The `next_cursor` of the previous page; absent for the first. */
  cursor: z.string().min(1).max(500).optional(),
};

/** `POST {utility_base_url}/v1/telemetry/latest`. */
export const TelemetryLatestRequest = z
  .object({
    program_id: z.string().min(1).max(100),
    device_ids: z.array(ExternalId).max(10_000).optional(),
    ...page,
  })
  .meta({ id: 'TelemetryLatestRequest' });
export type TelemetryLatestRequestType = z.infer<typeof TelemetryLatestRequest>;

/** `POST {utility_base_url}/v1/telemetry/historical`: readings whose start_time is in [start_time, end_time). */
export const TelemetryHistoricalRequest = z
  .object({
    program_id: z.string().min(1).max(100),
    start_time: DateTime,
    end_time: DateTime,
    device_ids: z.array(ExternalId).max(10_000).optional(),
    ...page,
  })
  .refine((r) => Date.parse(r.end_time) > Date.parse(r.start_time), { message: 'end_time must be after start_time', path: ['end_time'] })
  .meta({ id: 'TelemetryHistoricalRequest' });
export type TelemetryHistoricalRequestType = z.infer<typeof TelemetryHistoricalRequest>;

const out = () => z.number().nullable();

/** A telemetry row as utilities read it (decisions.md, Telemetry); null where not reported. */
export const TelemetryRow = z
  .object({
    device_id: z.string(),
    start_time: DateTime,
    duration_s: z.number(),
    last_is_online: z.boolean().nullable(),
    last_mode: z.string().nullable(),
    battery_power_charge_w: out(),
    battery_power_discharge_w: out(),
    battery_state_of_charge_percentage: out(),
    battery_last_backup_reserve_percentage: out(),
    battery_total_energy_charge_wh: out(),
    battery_total_energy_discharge_wh: out(),
    grid_power_w: out(),
    grid_total_energy_wh: out(),
    home_power_w: out(),
    home_total_energy_wh: out(),
    solar_power_w: out(),
    solar_total_energy_wh: out(),
  })
  .meta({ id: 'TelemetryRow' });
export type TelemetryRowType = z.infer<typeof TelemetryRow>;

/**
 * What telemetry-ingest answers for a utility read: one page of rows, in time order, and the
 * cursor of the next page (null on the last). The gateway sends `rows` as the body and the cursor
 * in the `Next-Cursor` header.
 */
export const TelemetryPage = z.object({ rows: z.array(TelemetryRow), next_cursor: z.string().nullable() });
export type TelemetryPageType = z.infer<typeof TelemetryPage>;

/**
 * devicePerformance (service to service, for event-dispatch): what devices actually delivered
 * inside an event's action windows, from their telemetry. Energy is discharged minus charged in
 * a DISCHARGE window, the reverse in a CHARGE one; an interval that straddles a window counts pro
 * rata. Each device names the windows (indices into `windows`) it took part in, so one request
 * covers every action of an event; its answer is the sum over those windows.
 */
export const PerformanceWindow = z
  .object({ starts_at: DateTime, ends_at: DateTime, mode: z.enum(['CHARGE', 'DISCHARGE']) })
  .refine((w) => Date.parse(w.ends_at) > Date.parse(w.starts_at), { message: 'ends_at must be after starts_at', path: ['ends_at'] });

/** Devices per request: a request stays far below a Kafka message's megabyte (callers send more in several). */
export const PERFORMANCE_DEVICES_MAX = 5000;

export const PerformanceRequest = z
  .object({
    windows: z.array(PerformanceWindow).min(1).max(MAX_ACTIONS),
    devices: z
      .array(z.object({ integrator_id: z.string().min(1), device_id: z.string().min(1), windows: z.array(z.number().int().min(0).max(MAX_ACTIONS - 1)).min(1).max(MAX_ACTIONS) }))
      .max(PERFORMANCE_DEVICES_MAX),
  })
  .refine((r) => r.devices.every((d) => d.windows.every((w) => w < r.windows.length)), { message: 'a device names a window that is not in windows', path: ['devices'] });
export type PerformanceRequestType = z.infer<typeof PerformanceRequest>;

/** Per device of the request, in its order: energy summed over the device's windows. */
export const PerformanceResponse = z.object({
  devices: z.array(
    z.object({
      integrator_id: z.string(),
      device_id: z.string(),
      /** Watt-hours; null when no telemetry of the device overlaps any of its windows. Always finite. */
      actual_energy_wh: z.number().nullable(),
      /** Seconds of the device's windows covered by its telemetry. */
      covered_s: z.number(),
    }),
  ),
});
export type PerformanceResponseType = z.infer<typeof PerformanceResponse>;
