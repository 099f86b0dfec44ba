import { TelemetryOperations } from '@efs/api';
import { assertInternal } from '@efs/access';
import { implement } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';
import { deliveredIn, type PerformanceWindow } from '../domain/performance.ts';

/** How far before a window an interval may start and still overlap it (counter intervals can span an offline stretch). */
export const PERFORMANCE_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

const key = (d: { integrator_id: string; device_id: string }) => `${d.integrator_id}\u0000${d.device_id}`;

/**
 * devicePerformance (internal): what devices actually delivered in an event's action windows
 * (event-dispatch asks with each participating device and the windows of its commands). Late
 * telemetry changes the answer: it is computed from what is stored now.
 */
export const devicePerformance = (ctx: Pick<TelemetryContext, 'knex' | 'readings'>) =>
  implement(TelemetryOperations.devicePerformance, async ({ body, principal }) => {
    assertInternal(principal);
    const windows: PerformanceWindow[] = body.windows.map((w) => ({ from: Date.parse(w.starts_at), to: Date.parse(w.ends_at), mode: w.mode }));
    const rows = body.devices.length === 0 ? [] : await ctx.readings.energyRows(ctx.knex, body.devices, windows, PERFORMANCE_LOOKBACK_MS);
    const byDevice = new Map<string, typeof rows>();
    for (const r of rows) {
      const list = byDevice.get(key(r));
      if (list) list.push(r);
      else byDevice.set(key(r), [r]);
    }
    return {
      devices: body.devices.map((d) => ({
        integrator_id: d.integrator_id,
        device_id: d.device_id,
        ...deliveredIn(byDevice.get(key(d)) ?? [], d.windows.map((i) => windows[i]!)),
      })),
    };
  });
