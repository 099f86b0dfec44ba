import type { AvroSchema, AvroType } from './avroType.ts';
import type { Fields } from './fields.ts';

/** How a topic is used; it decides retention and how the message key is chosen. */
export type TopicKind = 'request' | 'reply' | 'event' | 'state' | 'dead-letter';

/** One Kafka topic: its name, partitions, value schema and the type of its values. */
export interface Topic<S extends AvroSchema = AvroSchema> {
  readonly name: string;
  /** Schema-registry subject of the value schema (Confluent TopicNameStrategy: `<topic>-value`). */
  readonly subject: string;
  readonly kind: TopicKind;
  readonly partitions: number;
  /** Compacted topics keep the latest value per key (state topics: sites, devices, programs). */
  readonly compacted: boolean;
  readonly retentionMs?: number;
  readonly schema: S;
  /** The field definitions the schema derives from (entity state topics), with the API's bounds of each field. */
  readonly fields?: Fields;
  /** Phantom field carrying the value type; never set at run time. */
  readonly __type?: AvroType<S>;
}

export type TopicValue<T> = T extends Topic<infer S> ? AvroType<S> : never;

export function defineTopic<const S extends AvroSchema>(t: {
  name: string;
  kind: TopicKind;
  partitions: number;
  compacted?: boolean;
  retentionMs?: number;
  subject?: string;
  schema: S;
  fields?: Fields;
}): Topic<S> {
  return {
    name: t.name,
    subject: t.subject ?? `${t.name}-value`,
    kind: t.kind,
    partitions: t.partitions,
    compacted: t.compacted ?? false,
    ...(t.retentionMs !== undefined ? { retentionMs: t.retentionMs } : {}),
    schema: t.schema,
    ...(t.fields !== undefined ? { fields: t.fields } : {}),
  };
}

/**
 * A record key made of ids joined by '/'. Ids are free text, so a '/' (or '%') inside one is
 * escaped as in a URL ('%2F', '%25'): site 'a' with device 'b/c' and site 'a/b' with device 'c'
 * get different keys (the same key would let compaction keep only one of them). Ids without
 * either character give the keys they always had.
 */
export const compositeKey = (...ids: readonly string[]): string => ids.map((id) => (/[/%]/.test(id) ? id.replace(/%/g, '%25').replace(/\//g, '%2F') : id)).join('/');
