import { randomUUID } from 'node:crypto';
import type { Message } from 'kafkajs';
import { Headers, type Topic, type TopicValue } from '@efs/contracts';
import { SpanKind, continuedTrace, inSpan, injectTraceHeaders } from '@efs/telemetry';
import type { RegistryCodec } from '../codec.ts';
import { ServiceUnavailableError, type BatchMessage, type PublishBatchOptions, type PublishOptions } from '../transport.ts';
import type { ProducerQueue } from './producerQueue.ts';

/** Events onto their topics: encoded with the registry's schema, traced, queued for the producer. */
export class Publisher {
  private readonly codec: RegistryCodec;
  private readonly queue: ProducerQueue;
  private readonly prefix: string;

  constructor(deps: { codec: RegistryCodec; queue: ProducerQueue; prefix: string }) {
    this.codec = deps.codec;
    this.queue = deps.queue;
    this.prefix = deps.prefix;
  }

  async publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options: PublishOptions = {}): Promise<void> {
    const id = options.messageId ?? randomUUID();
    const name = this.prefix + topic.name;
    // A message written earlier (an outbox row) carries the trace it was written in: its publish continues that trace.
    await inSpan(`${name} publish`, { kind: SpanKind.PRODUCER, parent: continuedTrace(options.headers), attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': name, 'messaging.message.id': id } }, async () => {
      const bytes = await this.codec.encode(topic, value);
      await this.queue.send(name, { key, value: bytes, headers: { ...options.headers, ...injectTraceHeaders(), [Headers.messageId]: id } });
    });
  }

  async publishBatch<T extends Topic>(topic: T, messages: readonly BatchMessage<TopicValue<T>>[], options: PublishBatchOptions): Promise<void> {
    const name = this.prefix + topic.name;
    const deadline = Date.now() + options.timeoutMs;
    await inSpan(`${name} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': name, 'messaging.batch.message_count': messages.length } }, async () => {
      const headers = { ...options.headers, ...injectTraceHeaders() };
      const encoded: Message[] = [];
      for (const m of messages) encoded.push({ key: m.key, value: await this.codec.encode(topic, m.value), headers, ...(m.partition !== undefined ? { partition: m.partition } : {}) });
      let timer: NodeJS.Timeout | undefined;
      // The producer retries a lost broker for longer than a caller can wait: the deadline answers
      // first. What was queued past it is dropped unsent; what was already in flight may still be
      // written, which is why batch consumers must treat a resend as a replacement.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ServiceUnavailableError(`the broker did not acknowledge ${name} within ${options.timeoutMs} ms`)), Math.max(1, deadline - Date.now()));
      });
      try {
        await Promise.race([Promise.all(encoded.map((m) => this.queue.send(name, m, deadline))), timedOut]);
      } catch (err) {
        if (err instanceof ServiceUnavailableError) throw err;
        throw new ServiceUnavailableError(`the broker refused ${name}: ${(err as Error).message}`, { cause: err });
      } finally {
        clearTimeout(timer);
      }
    });
  }
}
