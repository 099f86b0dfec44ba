import type { ReadingMessage } from '@efs/contracts';
import type { Knex } from '@efs/db';
import { affectedRange, intervalsBetween, type CounterPoint } from '../domain/counters.ts';
import { dayOf } from '../domain/partitions.ts';
import { intervalRow, TimeParser, type StoredReading } from '../domain/reading.ts';
import type { CounterStore } from './counterStore.ts';
import type { PartitionStore } from './partitionStore.ts';
import type { DeviceRef, ReadingStore } from './readingStore.ts';

const deviceOf = (x: DeviceRef): string => `${x.integrator_id}\u0000${x.device_id}`;

function byDeviceOf<T extends DeviceRef>(xs: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const list = out.get(deviceOf(x));
    if (list) list.push(x);
    else out.set(deviceOf(x), [x]);
  }
  return out;
}

/**
 * Writes a consumed batch of readings in one transaction: BATTERY intervals as they are, counter
 * readings stored and turned into intervals. Everything it writes is a function of what is stored
 * (a resend replaces, a redelivered batch writes the same rows again), so at-least-once delivery
 * stores each reading exactly once.
 */
export class ReadingWriter {
  private readonly knex: Knex;
  private readonly readings: ReadingStore;
  private readonly counters: CounterStore;
  private readonly partitions: PartitionStore;

  constructor(opts: { knex: Knex; readings: ReadingStore; counters: CounterStore; partitions: PartitionStore }) {
    this.knex = opts.knex;
    this.readings = opts.readings;
    this.counters = opts.counters;
    this.partitions = opts.partitions;
  }

  async write(messages: readonly ReadingMessage[]): Promise<void> {
    const times = new TimeParser();
    const intervals: StoredReading[] = [];
    const counters: ReadingMessage[] = [];
    for (const m of messages) {
      if (m.kind === 'INTERVAL') intervals.push(intervalRow(m, times));
      else counters.push(m);
    }
    const points: CounterPoint[] = counters.map((m) => ({
      integrator_id: m.integrator_id,
      device_id: m.device_id,
      site_id: m.site_id,
      ts: times.ms(m.start_time),
      charge_wh: m.battery_lifetime_energy_charge_wh ?? 0,
      discharge_wh: m.battery_lifetime_energy_discharge_wh ?? 0,
      state_of_charge_percentage: m.battery_last_state_of_charge_percentage,
      received_at: times.ms(m.received_at),
    }));
    await this.partitions.ensure([...intervals.map((r) => dayOf(r.start_time)), ...points.map((p) => dayOf(p.ts))]);
    await this.knex.transaction(async (trx) => {
      const derived = points.length > 0 ? await this.deriveIntervals(trx, points) : [];
      await this.readings.merge(trx, [...intervals, ...derived]);
    });
  }

  /**
   * Stores counter readings and derives again every interval they change. Under the devices'
   * locks, the stored readings around the new ones are read back, so the previous reading is the
   * one before in time (not in arrival): a late reading splits the interval it falls into.
   */
  private async deriveIntervals(trx: Knex.Transaction, points: readonly CounterPoint[]): Promise<StoredReading[]> {
    const devices = [...byDeviceOf(points).values()].map((ps) => ({ integrator_id: ps[0]!.integrator_id, device_id: ps[0]!.device_id, times: ps.map((p) => p.ts) }));
    await this.counters.lockDevices(trx, devices);
    await this.counters.upsert(trx, points);
    const stored = await this.counters.around(
      trx,
      devices.map((d) => ({ integrator_id: d.integrator_id, device_id: d.device_id, from: Math.min(...d.times), to: Math.max(...d.times) })),
    );
    const storedBy = byDeviceOf(stored);
    const ranges: (DeviceRef & { from: number; to: number })[] = [];
    const derived: StoredReading[] = [];
    for (const d of devices) {
      const series = (storedBy.get(deviceOf(d)) ?? []).sort((a, b) => a.ts - b.ts);
      const first = Math.min(...d.times);
      const range = affectedRange(d.times, series.filter((s) => s.ts < first).at(-1)?.ts);
      ranges.push({ integrator_id: d.integrator_id, device_id: d.device_id, ...range });
      derived.push(...intervalsBetween(series, range.from, range.to));
    }
    await this.readings.deleteDerived(trx, ranges);
    return derived;
  }
}
