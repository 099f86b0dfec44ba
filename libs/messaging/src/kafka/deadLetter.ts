import type { KafkaMessage } from 'kafkajs';
import { DeadLetterHeaders } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import type { ConsumerCounters } from '../consumerMetrics.ts';
import type { MessageMeta } from '../transport.ts';
import type { ProducerQueue } from './producerQueue.ts';

/** Sends a message a consumer could not handle to the dead-letter topic, with the reason and where it came from. */
export async function deadLetter(deps: { queue: ProducerQueue; log: Logger }, counters: ConsumerCounters, dlt: string, group: string, meta: MessageMeta, message: KafkaMessage, reason: string): Promise<void> {
  await deps.queue.send(dlt, {
    key: message.key,
    value: message.value,
    headers: {
      ...meta.headers,
      [DeadLetterHeaders.reason]: reason.slice(0, 1000),
      [DeadLetterHeaders.originalTopic]: meta.topic,
      [DeadLetterHeaders.originalPartition]: String(meta.partition),
      [DeadLetterHeaders.originalOffset]: meta.offset,
      [DeadLetterHeaders.group]: group,
    },
  });
  counters.deadLettered();
  deps.log.error({ topic: meta.topic, message_id: meta.id, dead_letter_topic: dlt, reason }, 'message dead-lettered');
}
