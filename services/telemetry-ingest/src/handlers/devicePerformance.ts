import { TelemetryOperations, type PerformanceResponseType } from '@efs/api';
import { implement } from '@efs/messaging';
import type { TelemetryContext } from '../service.ts';
import { assertInternal } from '@efs/access';
import { deliveredIn, totalOf } from '../domain/performance.ts';

/** How far before a window an interval may start and still overlap it (counter intervals can span an offline stretch). */
export const PERFORMANCE_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

/**
 * devicePerformance (internal): what the devices actually delivered in a window, for an
 * event's performance (event-dispatch asks it with the participating devices and the action's
 * window and mode). Late telemetry changes the answer: it is computed from what is stored now.
 */
export const devicePerformance = (ctx: TelemetryContext) =>
  implement(TelemetryOperations.devicePerformance, async ({ body, principal }) => {
      assertInternal(principal);
      const [from, to] = [Date.parse(body.starts_at), Date.parse(body.ends_at)];
      const rows = body.devices.length === 0 || to <= from ? [] : await ctx.readings.energyRows(ctx.knex, body.devices, from, to, PERFORMANCE_LOOKBACK_MS);
      const key = (d: { integrator_id: string; device_id: string }) => `${d.integrator_id}\u0000${d.device_id}`;
      const byDevice = new Map<string, typeof rows>();
      for (const r of rows) byDevice.set(key(r), [...(byDevice.get(key(r)) ?? []), r]);
      const devices = body.devices.map((d) => ({ ...d, ...deliveredIn(byDevice.get(key(d)) ?? [], from, to, body.mode) }));
      const answer: PerformanceResponseType = { devices, total: totalOf(devices, Math.max(to - from, 1) / 3_600_000) };
      return answer;
  });
