import type { ReadingBatchMessage } from '@efs/contracts';
import type { Delivered } from '@efs/messaging';
import type { TelemetryContext } from '../context.ts';

/**
 * ReadingsTopic, in batches of records (each a ReadingBatch of one request's readings on this
 * partition): cut into parts of at most `batchSize` readings, whole records at a time, each
 * written with the parts other partitions hand in at the same time (ctx.writes: one transaction
 * for a fetch's batches, COPY, then merge). A failed write fails the delivered batch, which is
 * retried as a whole: every write is a replacement, so the transactions already committed are
 * written again to the same rows.
 */
export const onReadings = (ctx: Pick<TelemetryContext, 'writes'>, batchSize: number) =>
  async (batch: Delivered<ReadingBatchMessage>[]): Promise<void> => {
    let chunk: ReadingBatchMessage['readings'] = [];
    for (const { value } of batch) {
      if (chunk.length > 0 && chunk.length + value.readings.length > batchSize) {
        await ctx.writes.submit(chunk);
        chunk = [];
      }
      chunk = chunk.length === 0 ? value.readings : chunk.concat(value.readings);
    }
    if (chunk.length > 0) await ctx.writes.submit(chunk);
  };
