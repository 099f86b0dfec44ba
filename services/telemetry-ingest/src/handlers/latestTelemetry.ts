import { TelemetryOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';
import { decodeCursor } from '../domain/cursor.ts';
import { pageOf } from '../domain/page.ts';
import { programDevices } from './programDevices.ts';

/** `POST {utility_base_url}/v1/telemetry/latest`: each current device's newest reading, oldest first. */
export const latestTelemetry = (ctx: Pick<TelemetryContext, 'knex' | 'readings' | 'readModels'>) =>
  implement(TelemetryOperations.latestTelemetry, async ({ body, principal }) => {
      const after = body.cursor === undefined ? undefined : decodeCursor(body.cursor);
      const devices = await programDevices(ctx, principal, body.program_id, body.device_ids);
      const rows = devices.length === 0 ? [] : await ctx.readings.latest(ctx.knex, { devices, limit: body.limit + 1, ...(after ? { after } : {}) });
      return pageOf(rows, body.limit);
  });
