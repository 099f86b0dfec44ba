import type { StoredReading } from './reading.ts';

/** One action window of an event, as epoch milliseconds. */
export interface PerformanceWindow {
  from: number;
  to: number;
  mode: 'CHARGE' | 'DISCHARGE';
}

export interface PerformanceFigures {
  /** Watt-hours delivered in the windows; null when no interval overlaps any of them. Always finite. */
  actual_energy_wh: number | null;
  covered_s: number;
}

export type EnergyRow = Pick<StoredReading, 'start_time' | 'duration_s' | 'battery_total_energy_charge_wh' | 'battery_total_energy_discharge_wh' | 'battery_last_power_charge_w' | 'battery_last_power_discharge_w'>;

/**
 * The largest value one reading contributes (1 TWh, or 1 TW held over its interval): far beyond
 * any device, so only a corrupt report reaches it. Readings are any number 0 or more, and 1e308
 * added to itself is Infinity; bounding each term keeps every sum finite (a window holds far
 * fewer than 1e290 intervals).
 */
export const READING_TERM_MAX = 1e12;

const bounded = (v: number | null): number | null => (v === null ? null : Math.min(v, READING_TERM_MAX));

/** Energy of an interval: the reported total, else the reported power held over the interval. */
const energyOf = (total: number | null, power: number | null, seconds: number): number => bounded(total) ?? (power === null ? 0 : (bounded(power)! / 3600) * seconds);

/**
 * What one device delivered in its windows (decisions.md, Telemetry): in a DISCHARGE window the
 * energy discharged minus charged, in a CHARGE window the reverse; an interval straddling a window
 * counts in proportion to its overlap. Null energy when no interval overlaps any window.
 */
export function deliveredIn(rows: readonly EnergyRow[], windows: readonly PerformanceWindow[]): PerformanceFigures {
  let energy = 0;
  let covered = 0;
  let any = false;
  for (const w of windows) {
    let coveredHere = 0;
    for (const r of rows) {
      if (r.duration_s <= 0) continue;
      const end = r.start_time + r.duration_s * 1000;
      const overlap = Math.min(end, w.to) - Math.max(r.start_time, w.from);
      if (overlap <= 0) continue;
      any = true;
      const share = overlap / (r.duration_s * 1000);
      const charged = energyOf(r.battery_total_energy_charge_wh, r.battery_last_power_charge_w, r.duration_s) * share;
      const discharged = energyOf(r.battery_total_energy_discharge_wh, r.battery_last_power_discharge_w, r.duration_s) * share;
      energy += w.mode === 'DISCHARGE' ? discharged - charged : charged - discharged;
      coveredHere += overlap / 1000;
    }
    covered += Math.min(coveredHere, (w.to - w.from) / 1000);
  }
  return any ? { actual_energy_wh: energy, covered_s: covered } : { actual_energy_wh: null, covered_s: 0 };
}
