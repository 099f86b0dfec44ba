import type { Topic, TopicValue, RequestMessage, ReplyMessage, RequestTarget } from '@efs/contracts';

/** What a consumer knows about a message besides its value. */
export interface MessageMeta {
  /** Stable id of the message (header `efs-message-id`), the idempotency key of handlers. */
  id: string;
  topic: string;
  key: string | null;
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

export interface Delivered<T> {
  value: T;
  meta: MessageMeta;
}

export type EventHandler<T> = (message: Delivered<T>) => Promise<void>;

/**
 * Handles several messages at once (a bulk write). It succeeds or fails as a whole; a batch that
 * keeps failing is retried message by message so that only the messages that fail alone are
 * dead-lettered.
 */
export type BatchHandler<T> = (messages: Delivered<T>[]) => Promise<void>;

/** Answers one request; the reply's status and JSON body become the HTTP answer at the gateway. */
export type RequestHandler = (request: RequestMessage, meta: MessageMeta) => Promise<ReplyMessage>;

export interface PublishOptions {
  /** Defaults to a new UUID; pass the outbox row id so a re-publish keeps the same id. */
  messageId?: string;
  headers?: Record<string, string>;
}

export interface PublishBatchOptions {
  /**
   * How long the caller waits for the broker's acknowledgement of the whole batch; after it the
   * call fails with ServiceUnavailableError (messages still queued are not sent).
   */
  timeoutMs: number;
  headers?: Record<string, string>;
}

/** One message of publishBatch: its key, and optionally the partition it must go to (otherwise the key's). */
export interface BatchMessage<V> {
  key: string;
  value: V;
  partition?: number;
}

export interface RequestOptions {
  /**
   * The request's deadline, from now: the service drops the request unhandled when it gets it
   * later, and commits nothing after it. Without graceMs the caller waits this long, then the
   * request fails with ServiceUnavailableError.
   */
  timeoutMs: number;
  /**
   * How much longer than timeoutMs the caller waits for the reply: the answer of work committed
   * just before the deadline still arrives, so a ServiceUnavailableError means nothing was done.
   */
  graceMs?: number;
  /** Partitioning key (a site keeps its requests in order); without one, requests spread over all partitions. */
  key?: string;
}

export interface SubscribeOptions {
  /** Read a state topic from its start (read models), instead of only new messages. */
  fromBeginning?: boolean;
  /** Attempts for a retriable failure before the message goes to the dead-letter topic. */
  maxAttempts?: number;
  /**
   * For a read model this process keeps in memory: every start reads the whole topic again, in a
   * consumer group of this process alone (Kafka: the group name gets a suffix of its own, every
   * partition is assigned to it, no offset is ever committed), and `caughtUp` can be asked of it.
   * Implies fromBeginning.
   */
  inMemory?: boolean;
  /**
   * The handler changes nothing when it handles a message it handled before, even after later
   * messages and other writes (a read model's upsert that never writes an older state over a
   * newer one; a record of the message ids applied). Kafka then commits the offsets handled at
   * the end of a batch once KAFKA_EVENT_COMMIT_INTERVAL_MS (1 s) has passed since the last commit,
   * and before a rejoin and at stop (normally: a failed commit there is logged), instead of after
   * every partition batch: a process that dies has up to that much traffic handled again by the
   * next owner, and an idle consumer's last second stays uncommitted until its next batch. Without it a consumer commits after every batch. In-process: no offsets, no effect.
   */
  idempotent?: boolean;
}

export interface BatchSubscribeOptions extends SubscribeOptions {
  /** Most messages handed to the handler at once (Kafka: a fetched partition batch is cut to this). */
  maxBatchSize?: number;
  /** Partitions handled at the same time by this consumer (Kafka); each batch is one partition's. */
  concurrency?: number;
  /**
   * Kafka: the broker holds a fetch until this many bytes are there (or fetchMaxWaitMs passed):
   * fewer, larger batches under load, for at most fetchMaxWaitMs of added latency when quiet.
   * Without it a fetch returns as soon as anything is there.
   */
  fetchMinBytes?: number;
  fetchMaxWaitMs?: number;
}

/**
 * One interface, two transports: Kafka (production, distributed mode) and in-process (the
 * embedded default and fast tests). Both encode every value with the topic's Avro schema.
 */
export interface Transport {
  readonly kind: 'kafka' | 'in-process';
  /**
   * Whether a topic keeps what was published before this process started. Kafka: the brokers keep
   * it (a compacted state topic holds every key's latest value). In-process: every start begins
   * with empty topics while the owners' tables keep their state, so a read model built in memory
   * from a topic's whole history is complete only here.
   */
  readonly topicsOutliveProcess: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True while the transport can reach its broker. */
  isReady(): Promise<boolean>;
  publish<T extends Topic>(topic: T, key: string, value: TopicValue<T>, options?: PublishOptions): Promise<void>;
  subscribe<T extends Topic>(topic: T, group: string, handler: EventHandler<TopicValue<T>>, options?: SubscribeOptions): Promise<void>;
  /**
   * Publishes messages in the given order and resolves once the broker has acknowledged all of
   * them (Kafka: acks from all in-sync replicas). Each message carries no id of its own: a
   * consumer's meta.id is the topic, partition and offset. A message goes to the partition its key
   * hashes to, or to `partition` when given (see partitioner).
   */
  publishBatch<T extends Topic>(topic: T, messages: readonly BatchMessage<TopicValue<T>>[], options: PublishBatchOptions): Promise<void>;
  /**
   * The partition a key hashes to on a topic as it is now (Kafka's default partitioner over the
   * topic's current partition count; in-process: one partition). For a producer that packs the
   * values of many keys into one message per partition: each key's values stay on its partition.
   * Fails with ServiceUnavailableError when the partition count cannot be learnt within
   * `timeoutMs` (a count learnt before serves at once).
   */
  partitioner(topic: Topic, options: { timeoutMs: number }): Promise<(key: string) => number>;
  /** Like subscribe, with messages handed over in batches (in order within a partition). */
  subscribeBatch<T extends Topic>(topic: T, group: string, handler: BatchHandler<TopicValue<T>>, options?: BatchSubscribeOptions): Promise<void>;
  request(target: RequestTarget, request: RequestMessage, options: RequestOptions): Promise<ReplyMessage>;
  /**
   * Resolves true once this process's `inMemory` subscription `group` of `topic` has handled every
   * message the topic held at a moment after this call (Kafka: the partitions' end offsets, asked of
   * the brokers once for all the callers waiting at that moment, against the offsets handled;
   * in-process: what was queued for the group). So whatever a publisher was told was published
   * before this call is in the read model when it resolves true. False when that is not known
   * within `timeoutMs` (the brokers do not answer, the consumer lags), or when a message of the
   * topic could not be handled and was dead-lettered (the model misses it from then on).
   */
  caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean>;
  /**
   * Answers the target's requests with `handler`: those of different keys at the same time (up to
   * REQUEST_CONCURRENCY in this process), those of one key one after the other, in the order sent.
   */
  serve(target: RequestTarget, handler: RequestHandler): Promise<void>;
}

/** The service behind a request did not answer before the deadline (or the broker is unreachable). */
export class ServiceUnavailableError extends Error {
  override name = 'ServiceUnavailableError';
  readonly code = 'SERVICE_UNAVAILABLE';
}
