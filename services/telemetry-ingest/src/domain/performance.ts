import type { StoredReading } from './reading.ts';

export interface PerformanceFigures {
  actual_energy_wh: number | null;
  actual_power_w: number | null;
  covered_s: number;
}

export type EnergyRow = Pick<StoredReading, 'start_time' | 'duration_s' | 'battery_total_energy_charge_wh' | 'battery_total_energy_discharge_wh' | 'battery_last_power_charge_w' | 'battery_last_power_discharge_w'>;

/** Energy of an interval: the reported total, else the reported power held over the interval. */
const energyOf = (total: number | null, power: number | null, seconds: number): number => total ?? (power === null ? 0 : (power * seconds) / 3600);

/**
 * What one device delivered in [startsAt, endsAt) (epoch ms): for DISCHARGE the energy discharged
 * minus charged, for CHARGE the reverse; an interval straddling the window counts in proportion to
 * its overlap. Average power is that energy over the window's duration. Null figures when no
 * interval overlaps the window.
 */
export function deliveredIn(rows: readonly EnergyRow[], startsAt: number, endsAt: number, mode: 'CHARGE' | 'DISCHARGE'): PerformanceFigures {
  let energy = 0;
  let covered = 0;
  let any = false;
  for (const r of rows) {
    const end = r.start_time + r.duration_s * 1000;
    const overlap = Math.min(end, endsAt) - Math.max(r.start_time, startsAt);
    if (overlap <= 0 || r.duration_s <= 0) continue;
    any = true;
    const share = overlap / (r.duration_s * 1000);
    const charged = energyOf(r.battery_total_energy_charge_wh, r.battery_last_power_charge_w, r.duration_s) * share;
    const discharged = energyOf(r.battery_total_energy_discharge_wh, r.battery_last_power_discharge_w, r.duration_s) * share;
    energy += mode === 'DISCHARGE' ? discharged - charged : charged - discharged;
    covered += overlap / 1000;
  }
  if (!any) return { actual_energy_wh: null, actual_power_w: null, covered_s: 0 };
  const hours = (endsAt - startsAt) / 3_600_000;
  return { actual_energy_wh: energy, actual_power_w: energy / hours, covered_s: Math.min(covered, (endsAt - startsAt) / 1000) };
}

/** The devices' figures added up (null when none of them has telemetry in the window). */
export function totalOf(figures: readonly PerformanceFigures[], windowHours: number): PerformanceFigures {
  const known = figures.filter((f) => f.actual_energy_wh !== null);
  if (known.length === 0) return { actual_energy_wh: null, actual_power_w: null, covered_s: 0 };
  const energy = known.reduce((a, f) => a + f.actual_energy_wh!, 0);
  return { actual_energy_wh: energy, actual_power_w: energy / windowHours, covered_s: figures.reduce((a, f) => a + f.covered_s, 0) };
}
