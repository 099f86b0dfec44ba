import { describe, expect, it } from 'vitest';
import { affectedRange, intervalsBetween, type CounterPoint } from '../src/domain/counters.ts';
import { decodeCursor, encodeCursor } from '../src/domain/cursor.ts';
import { dayOf, dayOfSuffix, daysBetween, partitionSuffix } from '../src/domain/partitions.ts';
import { deliveredIn, READING_TERM_MAX } from '../src/domain/performance.ts';
import { noMeasures, type StoredReading } from '../src/domain/reading.ts';
import { toTelemetryRow } from '@efs/api';

const T0 = Date.UTC(2026, 10, 24, 12);
const min = (m: number) => T0 + m * 60_000;
const point = (m: number, charge: number, discharge: number, soc: number | null = null, received = 1): CounterPoint => ({
  integrator_id: 'i', device_id: 'd', site_id: 's', ts: min(m), charge_wh: charge, discharge_wh: discharge, state_of_charge_percentage: soc, received_at: received,
});
const reading = (startMin: number, durationS: number, o: Partial<StoredReading> = {}): StoredReading => ({
  ...noMeasures(), integrator_id: 'i', device_id: 'd', site_id: 's', start_time: min(startMin), duration_s: durationS, source: 'INTERVAL', received_at: 1, oem_raw_data: null, ...o,
});

describe('counter readings into intervals', () => {
  it('makes one interval per consecutive pair, with the differences and the state of charge at its end', () => {
    const got = intervalsBetween([point(0, 100, 50, 10), point(5, 130, 80, 20), point(15, 130, 100, 30)], min(0), min(15));
    expect(got.map((r) => [r.start_time, r.duration_s, r.battery_total_energy_charge_wh, r.battery_total_energy_discharge_wh, r.battery_last_state_of_charge_percentage, r.source])).toEqual([
      [min(0), 300, 30, 30, 20, 'COUNTER'],
      [min(5), 600, 0, 20, 30, 'COUNTER'],
    ]);
  });

  it('treats a counter that goes down (either of them) as a reset: no interval, never a negative one; the lower reading starts a new series', () => {
    const got = intervalsBetween([point(0, 100, 50), point(5, 20, 60), point(10, 30, 70), point(15, 40, 65), point(20, 50, 70)], min(0), min(20));
    expect(got.map((r) => [r.start_time, r.battery_total_energy_charge_wh, r.battery_total_energy_discharge_wh])).toEqual([
      [min(5), 10, 10],
      [min(15), 10, 5],
    ]);
    for (const r of got) expect(r.battery_total_energy_charge_wh! >= 0 && r.battery_total_energy_discharge_wh! >= 0).toBe(true);
  });

  it('derives only the intervals starting inside the affected range, from the reading before the earliest new one', () => {
    expect(affectedRange([min(10), min(5)], min(0))).toEqual({ from: min(0), to: min(10) });
    expect(affectedRange([min(10)], undefined)).toEqual({ from: min(10), to: min(10) });
    const got = intervalsBetween([point(0, 0, 0), point(5, 1, 1), point(10, 2, 2), point(15, 3, 3)], min(5), min(5));
    expect(got.map((r) => r.start_time)).toEqual([min(5)]);
  });

  it('takes the later acceptance time of the two readings, so a resend of either wins over what was derived before', () => {
    expect(intervalsBetween([point(0, 0, 0, null, 7), point(5, 1, 1, null, 3)], min(0), min(0))[0]!.received_at).toBe(7);
  });
});

describe('what devices delivered in their windows', () => {
  const w = (from: number, to: number, mode: 'CHARGE' | 'DISCHARGE' = 'DISCHARGE') => ({ from: min(from), to: min(to), mode });

  it('counts discharged minus charged for DISCHARGE and the reverse for CHARGE, prorating intervals that straddle the window', () => {
    const rows = [
      reading(-5, 600, { battery_total_energy_discharge_wh: 200, battery_total_energy_charge_wh: 0 }), // half inside
      reading(5, 300, { battery_total_energy_discharge_wh: 100, battery_total_energy_charge_wh: 20 }),
      reading(20, 300, { battery_total_energy_discharge_wh: 999 }), // outside
    ];
    const d = deliveredIn(rows, [w(0, 10)]);
    expect(d.actual_energy_wh).toBeCloseTo(100 + 80);
    expect(d.covered_s).toBe(600);
    expect(deliveredIn(rows, [w(0, 10, 'CHARGE')]).actual_energy_wh).toBeCloseTo(-180);
  });

  it('adds up several windows, each with its own mode', () => {
    const rows = [reading(0, 600, { battery_total_energy_discharge_wh: 300, battery_total_energy_charge_wh: 0 }), reading(30, 600, { battery_total_energy_charge_wh: 400, battery_total_energy_discharge_wh: 0 })];
    expect(deliveredIn(rows, [w(0, 10), w(30, 40, 'CHARGE')])).toEqual({ actual_energy_wh: 700, covered_s: 1200 });
    // Only the windows given count: the CHARGE interval is outside the first window.
    expect(deliveredIn(rows, [w(0, 10)])).toEqual({ actual_energy_wh: 300, covered_s: 600 });
  });

  it('falls back to the reported power over the interval when energy is not reported, and answers null without telemetry', () => {
    expect(deliveredIn([reading(0, 3600, { battery_last_power_discharge_w: 500 })], [w(0, 60)]).actual_energy_wh).toBeCloseTo(500);
    expect(deliveredIn([], [w(0, 60)])).toEqual({ actual_energy_wh: null, covered_s: 0 });
    expect(deliveredIn([reading(100, 300, { battery_total_energy_discharge_wh: 5 })], [w(0, 60)])).toEqual({ actual_energy_wh: null, covered_s: 0 });
  });

  it('stays finite whatever a device reports: each reading counts at most READING_TERM_MAX', () => {
    const huge = Number.MAX_VALUE;
    const rows = Array.from({ length: 1000 }, (_, i) => reading(i * 0.01, 31 * 24 * 3600, { battery_total_energy_discharge_wh: huge, battery_last_power_discharge_w: huge, battery_last_power_charge_w: huge }));
    const d = deliveredIn(rows, [w(0, 60)]);
    expect(Number.isFinite(d.actual_energy_wh)).toBe(true);
    expect(d.actual_energy_wh!).toBeLessThanOrEqual(1000 * READING_TERM_MAX);
    // Power alone, over a month-long interval: bounded before it is multiplied by the interval.
    const byPower = deliveredIn([reading(0, 31 * 24 * 3600, { battery_last_power_discharge_w: huge })], [w(0, 60)]);
    expect(Number.isFinite(byPower.actual_energy_wh)).toBe(true);
  });
});

describe('utility rows', () => {
  it('maps stored readings to the row fields and derives the grid from the balance only when every term is reported', () => {
    const row = toTelemetryRow(reading(0, 300, { home_last_power_w: 3000, solar_last_power_w: 1000, battery_last_power_charge_w: 0, battery_last_power_discharge_w: 2500, last_is_online: true, last_mode: 'SELF_CONSUMPTION' }));
    expect(row).toMatchObject({ device_id: 'd', start_time: new Date(min(0)).toISOString(), duration_s: 300, grid_power_w: -500, home_power_w: 3000, solar_power_w: 1000, battery_power_discharge_w: 2500, last_mode: 'SELF_CONSUMPTION', grid_total_energy_wh: null });
    expect(toTelemetryRow(reading(0, 300, { home_last_power_w: 3000 })).grid_power_w).toBeNull();
  });
});

describe('cursors and partitions', () => {
  it('round-trips a cursor and refuses one it did not make', () => {
    const c = { start_time: min(3), integrator_id: 'a/b', device_id: 'dév 1' };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    for (const bad of ['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) expect(() => decodeCursor(bad)).toThrow(/cursor/);
  });

  it('names day partitions in UTC and lists the days of a range', () => {
    expect(partitionSuffix(dayOf(Date.UTC(2026, 0, 2, 23, 59)))).toBe('p20260102');
    expect(dayOfSuffix('readings_p20260102')).toBe(Date.UTC(2026, 0, 2));
    expect(dayOfSuffix('readings_default')).toBeUndefined();
    expect(daysBetween(Date.UTC(2026, 0, 30, 5), Date.UTC(2026, 1, 1, 1)).map(partitionSuffix)).toEqual(['p20260130', 'p20260131', 'p20260201']);
  });
});
