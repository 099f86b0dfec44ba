import { TelemetryOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';
import { decodeCursor } from '../domain/cursor.ts';
import { pageOf } from '../domain/page.ts';
import { programDevices } from './programDevices.ts';

/** `POST {utility_base_url}/v1/telemetry/historical`: readings starting in [start_time, end_time), in time order, a page at a time. */
export const historicalTelemetry = (ctx: Pick<TelemetryContext, 'knex' | 'readings' | 'readModels'>) =>
  implement(TelemetryOperations.historicalTelemetry, async ({ body, principal }) => {
      const after = body.cursor === undefined ? undefined : decodeCursor(body.cursor);
      const devices = await programDevices(ctx, principal, body.program_id, body.device_ids);
      const window = { from: Date.parse(body.start_time), to: Date.parse(body.end_time) };
      const rows = devices.length === 0 ? [] : await ctx.readings.historical(ctx.knex, { devices, ...window, limit: body.limit + 1, ...(after ? { after } : {}) });
      return pageOf(rows, body.limit);
  });
