export type { Transport, MessageMeta, Delivered, EventHandler, BatchHandler, RequestHandler, PublishOptions, PublishBatchOptions, RequestOptions, SubscribeOptions, BatchSubscribeOptions, BatchMessage } from './transport.ts';
export { ServiceUnavailableError } from './transport.ts';
// Consumers throw it; it lives with the error catalogue (isRetriable), re-exported for them.
export { NonRetriableError } from '@efs/errors';
export { KafkaTransport, REQUEST_COMMIT_INTERVAL_MS, EVENT_COMMIT_INTERVAL_MS } from './kafka/kafkaTransport.ts';
export type { KafkaTransportOptions } from './kafka/kafkaTransport.ts';
export { InProcessTransport } from './inProcessTransport.ts';
export type { DeadLetter } from './inProcessTransport.ts';
export { AvroCodec, RegistryCodec } from './codec.ts';
export type { Codec } from './codec.ts';
export { deliverWithRetry, deliverBatchWithRetry } from './deliver.ts';
export { PendingReplies } from './pending.ts';
export { bindHandlers, implement, operationRouter, errorReply, expiredReply, JsonReply } from './router.ts';
export type { HandlerMap, OperationHandler, OperationInput } from './router.ts';
export { call, send, readReply } from './call.ts';
export type { CallInput } from './call.ts';
