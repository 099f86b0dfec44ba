import { noMeasures, type StoredReading } from './reading.ts';

/** A lifetime-counter reading of a device (BATTERY_COUNTER item), times in epoch ms. */
export interface CounterPoint {
  integrator_id: string;
  device_id: string;
  site_id: string;
  ts: number;
  charge_wh: number;
  discharge_wh: number;
  state_of_charge_percentage: number | null;
  received_at: number;
}

/**
 * The intervals between consecutive counter readings of one device (sorted by time) whose start
 * lies in [from, to]: each lasts from one reading to the next, with the energy charged and
 * discharged as the counters' differences and the state of charge at its end. A counter that went
 * down is a reset: the pair makes no interval (never a negative one), and the lower reading starts
 * the new series.
 */
export function intervalsBetween(points: readonly CounterPoint[], from: number, to: number): StoredReading[] {
  const out: StoredReading[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [p, q] = [points[i]!, points[i + 1]!];
    if (p.ts < from || p.ts > to) continue;
    if (q.charge_wh < p.charge_wh || q.discharge_wh < p.discharge_wh) continue;
    out.push({
      ...noMeasures(),
      integrator_id: q.integrator_id,
      device_id: q.device_id,
      site_id: q.site_id,
      start_time: p.ts,
      duration_s: (q.ts - p.ts) / 1000,
      source: 'COUNTER',
      received_at: Math.max(p.received_at, q.received_at),
      battery_total_energy_charge_wh: q.charge_wh - p.charge_wh,
      battery_total_energy_discharge_wh: q.discharge_wh - p.discharge_wh,
      battery_last_state_of_charge_percentage: q.state_of_charge_percentage,
      oem_raw_data: null,
    });
  }
  return out;
}

/**
 * Which derived intervals new readings of one device can change: those starting from the reading
 * before the earliest new one (its interval now ends earlier) to the latest new one.
 */
export function affectedRange(newTimes: readonly number[], predecessor: number | undefined): { from: number; to: number } {
  const min = Math.min(...newTimes);
  return { from: predecessor ?? min, to: Math.max(...newTimes) };
}
