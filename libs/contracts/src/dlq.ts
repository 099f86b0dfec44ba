/** Dead-letter topics hold the original bytes (still Avro, with their schema id) of a message no handler could process. */
export function deadLetterTopicName(topic: string): string {
  return `${topic}.dlt`;
}

export const DeadLetterHeaders = {
  reason: 'efs-dlt-reason',
  originalTopic: 'efs-dlt-topic',
  originalPartition: 'efs-dlt-partition',
  originalOffset: 'efs-dlt-offset',
  group: 'efs-dlt-group',
} as const;
