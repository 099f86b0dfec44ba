import type { TelemetryRowType } from './telemetry.ts';

type Reported = number | null;

/** What a row is made of: a reading as telemetry-ingest stores it, or as the readings topic carries it. */
export interface TelemetryRowSource {
  device_id: string;
  /** ISO-8601 text or epoch milliseconds. */
  start_time: string | number;
  duration_s: number;
  last_is_online: boolean | null;
  last_mode: string | null;
  battery_last_power_charge_w: Reported;
  battery_last_power_discharge_w: Reported;
  battery_last_state_of_charge_percentage: Reported;
  battery_last_backup_reserve_percentage: Reported;
  battery_total_energy_charge_wh: Reported;
  battery_total_energy_discharge_wh: Reported;
  home_last_power_w: Reported;
  home_total_energy_wh: Reported;
  solar_last_power_w: Reported;
  solar_total_energy_wh: Reported;
}

const sumOrNull = (plus: (number | null)[], minus: (number | null)[]): number | null =>
  [...plus, ...minus].some((v) => v === null) ? null : plus.reduce<number>((a, v) => a + v!, 0) - minus.reduce<number>((a, v) => a + v!, 0);

/**
 * A stored reading as utilities read it. Devices report home, solar and battery but not the grid:
 * the grid's figures are the balance of the others (import positive, export negative) when all of
 * them are reported, null otherwise. Telemetry-ingest answers utilities' reads with it; webhooks
 * announce readings with it (telemetry.published).
 */
export function toTelemetryRow(r: TelemetryRowSource): TelemetryRowType {
  return {
    device_id: r.device_id,
    start_time: new Date(r.start_time).toISOString(),
    duration_s: r.duration_s,
    last_is_online: r.last_is_online,
    last_mode: r.last_mode,
    battery_power_charge_w: r.battery_last_power_charge_w,
    battery_power_discharge_w: r.battery_last_power_discharge_w,
    battery_state_of_charge_percentage: r.battery_last_state_of_charge_percentage,
    battery_last_backup_reserve_percentage: r.battery_last_backup_reserve_percentage,
    battery_total_energy_charge_wh: r.battery_total_energy_charge_wh,
    battery_total_energy_discharge_wh: r.battery_total_energy_discharge_wh,
    grid_power_w: sumOrNull([r.home_last_power_w, r.battery_last_power_charge_w], [r.solar_last_power_w, r.battery_last_power_discharge_w]),
    grid_total_energy_wh: sumOrNull([r.home_total_energy_wh, r.battery_total_energy_charge_wh], [r.solar_total_energy_wh, r.battery_total_energy_discharge_wh]),
    home_power_w: r.home_last_power_w,
    home_total_energy_wh: r.home_total_energy_wh,
    solar_power_w: r.solar_last_power_w,
    solar_total_energy_wh: r.solar_total_energy_wh,
  };
}
