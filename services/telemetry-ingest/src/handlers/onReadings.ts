import type { ReadingMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { TelemetryContext } from '../service.ts';

/** ReadingsTopic, in batches: one transaction per batch (COPY, then merge). */
export const onReadings = (ctx: TelemetryContext) =>
  async (batch: Delivered<ReadingMessage>[]): Promise<void> => {
    await ctx.writer.write(batch.map((m) => m.value));
  };
