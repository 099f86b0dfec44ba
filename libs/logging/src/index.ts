import { pino, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';

export type { Logger } from 'pino';

/** Paths whose values never reach a log line: credentials in headers and bodies. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'site_access_token',
  '*.site_access_token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'connectionString',
  '*.connectionString',
];

/** One root logger per process; components take children with their own bindings. */
export function createLogger(opts: { name: string; level?: string; destination?: pino.DestinationStream }): Logger {
  const options: LoggerOptions = {
    name: opts.name,
    level: opts.level ?? 'info',
    redact: { paths: redactPaths, censor: '[redacted]' },
    // Every line carries the active trace so logs and traces join up.
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** Masks a token for diagnostics: keeps its kind prefix, drops the secret part. */
export function maskToken(token: string): string {
  const m = /^([a-z]+_[a-z]+_)/.exec(token);
  return `${m ? m[1] : ''}***`;
}
