import type { IHeaders, KafkaMessage } from 'kafkajs';
import { Headers } from '@efs/contracts';
import type { MessageMeta } from '../transport.ts';

export function headerString(h: IHeaders, name: string): string | undefined {
  const v = h[name];
  if (v === undefined) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
}

function headersToStrings(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(h ?? {})) {
    const v = headerString(h!, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** What a handler is told about a message it consumes (`topic` without the transport's prefix). */
export function metaOf(topic: string, partition: number, message: KafkaMessage): MessageMeta {
  const headers = headersToStrings(message.headers);
  return {
    id: headers[Headers.messageId] ?? `${topic}/${partition}/${message.offset}`,
    topic,
    key: message.key ? message.key.toString('utf8') : null,
    headers,
    partition,
    offset: message.offset,
  };
}
