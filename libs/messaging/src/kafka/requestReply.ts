import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { Headers, deadlinePassed, RequestTopics, ReplyTopic, replyTopicName, type RequestMessage, type ReplyMessage, type RequestTarget } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { SpanKind, inSpan, injectTraceHeaders, extractTraceContext } from '@efs/telemetry';
import type { RegistryCodec } from '../codec.ts';
import { KeyedRunner } from '../keyedRunner.ts';
import { expiredReply, replyOf } from '../router.ts';
import { PendingReplies } from '../pending.ts';
import type { ConsumerCounters, ConsumerMetrics } from '../consumerMetrics.ts';
import type { RequestMetrics } from '../requestMetrics.ts';
import { ServiceUnavailableError, type MessageMeta, type RequestHandler, type RequestOptions } from '../transport.ts';
import { REQUEST_COMMIT_INTERVAL_MS, eachMessage, type ConsumerRun, type Consumers } from './consumers.ts';
import { headerString, metaOf } from './messageMeta.ts';
import type { ProducerQueue } from './producerQueue.ts';
import type { TopicAdmin } from './topicAdmin.ts';

export interface RequestReplyDeps {
  codec: RegistryCodec;
  queue: ProducerQueue;
  consumers: Consumers;
  topics: TopicAdmin;
  log: Logger;
  prefix: string;
  /** Set on a gateway instance: it creates and consumes its own reply topic. */
  replyInstanceId: string | undefined;
  /** The fetch wait of request and reply consumers (KafkaTransportOptions.maxWaitTimeInMs). */
  maxWait: number;
  /** True once the transport stops: no request is admitted from then on. */
  isStopping: () => boolean;
  metrics: RequestMetrics;
  consumerMetrics: ConsumerMetrics;
}

/** Request/reply over Kafka: requests on their target's topic, replies on the caller instance's own reply topic. */
export class RequestReply {
  readonly replyTopic: string | undefined;
  /** The runners of the served targets (their requests in flight). */
  private readonly servers: KeyedRunner[] = [];
  private readonly pending = new PendingReplies();
  private readonly deps: RequestReplyDeps;

  constructor(deps: RequestReplyDeps) {
    this.deps = deps;
    this.replyTopic = deps.replyInstanceId ? deps.prefix + replyTopicName(deps.replyInstanceId) : undefined;
  }

  /** Waits (10 s at most) for the requests admitted to be handled to the end. */
  async serversIdle(): Promise<void> {
    await Promise.race([Promise.all(this.servers.map((r) => r.idle())), new Promise((r) => setTimeout(r, 10_000).unref())]);
  }

  /** Fails the calls still waiting for a reply. */
  rejectPending(err: Error): void {
    this.pending.rejectAll(err);
  }

  async request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage> {
    if (!this.replyTopic) throw new Error('this transport was built without a reply topic (replyInstanceId)');
    const { codec, queue, log, prefix, metrics } = this.deps;
    const started = performance.now();
    const topic = RequestTopics[target];
    const correlationId = randomUUID();
    const deadline = Date.now() + options.timeoutMs;
    const sent = inSpan(`${topic.name} request ${request.op}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': topic.name, 'efs.op': request.op } }, async () => {
      const reply = this.pending.wait(correlationId, options.timeoutMs + (options.graceMs ?? 0), target);
      const send = async () => {
        const bytes = await codec.encode(topic, request);
        // A request still waiting to be sent at its deadline is not sent: the caller already has its 503.
        await queue.send(
          prefix + topic.name,
          {
            key: options.key ?? correlationId,
            value: bytes,
            headers: {
              ...injectTraceHeaders(),
              [Headers.messageId]: correlationId,
              [Headers.correlationId]: correlationId,
              [Headers.deadline]: String(deadline),
              [Headers.waitUntil]: String(deadline + (options.graceMs ?? 0)),
              [Headers.replyTo]: this.replyTopic!,
              [Headers.operation]: request.op,
            },
          },
          deadline,
        );
      };
      send().catch((err: Error) => {
        log.warn({ err, target, op: request.op }, 'request could not be sent');
        this.pending.fail(correlationId, new ServiceUnavailableError(`${target} unreachable: ${err.message}`));
      });
      return reply;
    });
    return metrics.timed(target, request.op, started, sent);
  }

  /**
   * Serves a request topic: requests of different keys are handled at the same time (up to
   * REQUEST_CONCURRENCY per process), those of one key (a site) one after the other, in the
   * order of their partition, as the in-process transport does. A request's offset is committed
   * once it is admitted, not once answered: a process that dies while handling it leaves it
   * unanswered, and its caller's deadline (503, nothing committed after it) answers instead.
   */
  async serve(target: RequestTarget, handler: RequestHandler): Promise<void> {
    const { consumers, log, prefix, maxWait, isStopping } = this.deps;
    const topic = RequestTopics[target];
    const group = `efs-${target}-requests`;
    const counters = this.deps.consumerMetrics.of(group, topic.name);
    const runner = new KeyedRunner({ onError: (err) => log.error({ err, target }, 'request could not be handled') });
    this.servers.push(runner);
    const consumer: ConsumerRun = {
      partitionsConsumedConcurrently: topic.partitions,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (const message of batch.messages) {
          // A rebalance took the partition away, or we are stopping: the rest goes to whoever owns it next.
          if (isStopping() || !isRunning() || isStale()) return;
          const meta = metaOf(topic.name, batch.partition, message);
          // Waits while the process has REQUEST_CONCURRENCY requests admitted (the topic keeps the
          // rest); after such a wait the partition may have gone to another replica, or we may be
          // stopping: then the request is left to the next owner, unhandled here.
          const admitted = await runner.admit(meta.key ?? meta.id, () => this.answerRequest(target, handler, message, meta, counters), () => !isStopping() && isRunning() && !isStale());
          if (!admitted) return;
          resolveOffset(message.offset);
          await heartbeat();
        }
      },
    };
    await consumers.run(prefix + group, prefix + topic.name, false, maxWait, consumer, { intervalMs: REQUEST_COMMIT_INTERVAL_MS }, { group, topic: topic.name });
  }

  /** Handles one request in its turn and sends the reply; a request past its deadline is dropped unhandled. */
  private async answerRequest(target: RequestTarget, handler: RequestHandler, message: KafkaMessage, meta: MessageMeta, counters: ConsumerCounters): Promise<void> {
    const { codec, queue, log, metrics } = this.deps;
    const topic = RequestTopics[target];
    const deadline = Number(meta.headers[Headers.deadline] ?? 0);
    const waitUntil = Math.max(deadline, Number(meta.headers[Headers.waitUntil] ?? 0)) || undefined;
    const replyTo = meta.headers[Headers.replyTo];
    const correlationId = meta.headers[Headers.correlationId];
    if (!replyTo || !correlationId) {
      log.warn({ message_id: meta.id }, 'request without reply-to or correlation id dropped');
      return;
    }
    if (deadlinePassed(meta.headers[Headers.deadline])) {
      // Not handled. A caller still waiting (its grace) learns at once that nothing was done.
      metrics.expired(target, meta.headers[Headers.operation]);
      log.info({ message_id: meta.id, op: meta.headers[Headers.operation], late_ms: Date.now() - deadline }, 'request past its deadline dropped unhandled');
      if (waitUntil && Date.now() < waitUntil) {
        const bytes = await codec.encode(ReplyTopic, expiredReply());
        queue.send(replyTo, { key: correlationId, value: bytes, headers: { [Headers.messageId]: randomUUID(), [Headers.correlationId]: correlationId } }, waitUntil).catch(() => undefined);
      }
      return;
    }
    await inSpan(`${topic.name} handle`, { kind: SpanKind.SERVER, parent: extractTraceContext(meta.headers), attributes: { 'messaging.system': 'kafka', 'messaging.message.id': meta.id } }, async (span) => {
      const request = (await codec.decode(topic, message.value!)) as RequestMessage;
      span.setAttribute('efs.op', request.op);
      const bytes = await codec.encode(ReplyTopic, await replyOf(handler, request, meta, log));
      // Not awaited: the next request of this key need not wait for the broker's ack of this
      // reply (order matters between requests, not between replies). A reply that fails to go
      // out leaves its caller to its deadline (503); stop() drains the queue.
      queue.send(replyTo, { key: correlationId, value: bytes, headers: { ...injectTraceHeaders(), [Headers.messageId]: randomUUID(), [Headers.correlationId]: correlationId } }, waitUntil).catch((err: Error) =>
        log.warn({ err, correlation_id: correlationId }, 'reply could not be sent; the caller will time out'),
      );
    });
    counters.handled(1);
  }

  /** Creates this instance's reply topic and consumes it; does nothing on a transport without one. */
  async startReplyConsumer(): Promise<void> {
    const replyTopic = this.replyTopic;
    if (!replyTopic) return;
    const { codec, consumers, topics, log, prefix, maxWait } = this.deps;
    await topics.ensureTopics([{ name: replyTopic, partitions: ReplyTopic.partitions, retentionMs: ReplyTopic.retentionMs! }]);
    const replies = eachMessage(async (message) => {
      const correlationId = headerString(message.headers ?? {}, Headers.correlationId);
      if (!correlationId || !message.value) return;
      const reply = (await codec.decode(ReplyTopic, message.value)) as ReplyMessage;
      if (!this.pending.settle(correlationId, reply)) log.debug({ correlation_id: correlationId }, 'late reply dropped');
    });
    await consumers.run(`${prefix}efs-replies-${this.deps.replyInstanceId}`, replyTopic, false, maxWait, replies, { intervalMs: REQUEST_COMMIT_INTERVAL_MS });
  }
}
