import type { Message, Producer } from 'kafkajs';
import { ServiceUnavailableError } from '../transport.ts';

interface Outgoing {
  topic: string;
  message: Message;
  deadline: number | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The messages waiting for the producer. The idempotent producer sends one request at a time
 * (kafkajs allows no more in flight), so everything queued while a send is in flight leaves
 * together in the next sendBatch: no added latency when idle, far fewer round trips under load.
 * A message whose deadline (epoch ms) passes while it waits is dropped, not sent.
 */
export class ProducerQueue {
  private readonly outgoing: Outgoing[] = [];
  private flushing = false;
  private readonly producer: Producer;

  constructor(producer: Producer) {
    this.producer = producer;
  }

  send(topic: string, message: Message, deadline?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.outgoing.push({ topic, message, deadline, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Waits (10 s at most) for the queued messages (replies, outbox events) to leave, before the producer closes. */
  async drain(): Promise<void> {
    for (let i = 0; i < 500 && (this.flushing || this.outgoing.length > 0); i++) await new Promise((r) => setTimeout(r, 20));
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.outgoing.length > 0) {
        const now = Date.now();
        const batch = this.outgoing.splice(0, this.outgoing.length);
        const live = batch.filter((o) => {
          if (o.deadline === undefined || o.deadline > now) return true;
          o.reject(new ServiceUnavailableError('deadline passed before the message could be sent'));
          return false;
        });
        if (live.length === 0) continue;
        const byTopic = new Map<string, Message[]>();
        for (const o of live) {
          const list = byTopic.get(o.topic);
          if (list) list.push(o.message);
          else byTopic.set(o.topic, [o.message]);
        }
        const deadlines = live.map((o) => o.deadline);
        const timeout = deadlines.every((d) => d !== undefined) ? Math.max(1, Math.max(...(deadlines as number[])) - now) : 30_000;
        try {
          await this.producer.sendBatch({ acks: -1, timeout, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          for (const o of live) o.resolve();
        } catch (err) {
          for (const o of live) o.reject(err as Error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
