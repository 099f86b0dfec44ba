/** Header names every message carries. */
export const Headers = {
  messageId: 'efs-message-id',
  correlationId: 'efs-correlation-id',
  /** Epoch milliseconds after which the caller no longer waits for an answer. */
  deadline: 'efs-deadline',
  replyTo: 'efs-reply-to',
  /** W3C trace context. */
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
