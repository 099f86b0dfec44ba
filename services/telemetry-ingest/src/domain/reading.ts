import type { ReadingMessage } from '@efs/contracts';

/** What a BATTERY item reports besides its device and period, as the readings table stores it. */
export const MEASURES = [
  'last_is_online',
  'last_mode',
  'battery_last_power_charge_w',
  'battery_last_power_discharge_w',
  'battery_total_energy_charge_wh',
  'battery_total_energy_discharge_wh',
  'battery_last_stored_energy_wh',
  'battery_last_capacity_energy_wh',
  'battery_last_state_of_charge_percentage',
  'battery_last_state_of_health_percentage',
  'battery_last_backup_reserve_percentage',
  'last_is_grid_online',
  'home_total_energy_wh',
  'home_last_power_w',
  'solar_total_energy_wh',
  'solar_last_power_w',
] as const satisfies readonly (keyof ReadingMessage)[];

export type Measures = { [K in (typeof MEASURES)[number]]: ReadingMessage[K] };

/** Columns of the readings table, in the order rows are copied into it. */
export const READING_COLUMNS = ['integrator_id', 'device_id', 'start_time', 'duration_s', 'source', 'site_id', 'received_at', ...MEASURES, 'oem_raw_data'] as const;

/** A reading as stored: times in epoch milliseconds, `oem_raw_data` as JSON text. */
export interface StoredReading extends Measures {
  integrator_id: string;
  device_id: string;
  site_id: string;
  start_time: number;
  duration_s: number;
  source: 'INTERVAL' | 'COUNTER';
  received_at: number;
  oem_raw_data: string | null;
}

export const noMeasures = (): Measures => Object.fromEntries(MEASURES.map((m) => [m, null])) as Measures;

/** An INTERVAL reading message as the row it becomes. */
export function intervalRow(m: ReadingMessage): StoredReading {
  const row = {
    integrator_id: m.integrator_id,
    device_id: m.device_id,
    site_id: m.site_id,
    start_time: Date.parse(m.start_time),
    duration_s: m.duration_s ?? 0,
    source: 'INTERVAL',
    received_at: Date.parse(m.received_at),
    oem_raw_data: m.oem_raw_data,
  } as StoredReading;
  const measures = row as unknown as Record<string, unknown>;
  for (const k of MEASURES) measures[k] = m[k] ?? null;
  return row;
}
