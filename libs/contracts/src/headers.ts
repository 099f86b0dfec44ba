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
  /** W3C trace context. */
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
