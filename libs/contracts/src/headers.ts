/** Header names every message carries. */
export const Headers = {
  messageId: 'efs-message-id',
  correlationId: 'efs-correlation-id',
  /** Epoch milliseconds after which the caller no longer waits for an answer. */
  deadline: 'efs-deadline',
  /**
   * Epoch milliseconds until which the caller still waits for the reply (at or after the
   * deadline): work committed just before the deadline still gets its answer through.
   */
  waitUntil: 'efs-wait-until',
  replyTo: 'efs-reply-to',
  /**
   * A request's operation (its `op`), readable without decoding the request: a service counts the
   * requests it drops past their deadline by operation without the cost of decoding them.
   */
  operation: 'efs-operation',
  /** W3C trace context. */
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
