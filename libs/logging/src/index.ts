import { pino, type ChildLoggerOptions, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';
import { stdoutWriter } from './nonBlockingWriter.ts';
import { TurnBatchedDestination } from './turnBatchedDestination.ts';

export type { Logger } from 'pino';
export { TurnBatchedDestination } from './turnBatchedDestination.ts';
export { droppedLogLines, heldLogBytes, NonBlockingWriter } from './nonBlockingWriter.ts';

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

let lastMs = Number.NaN;
let lastTime = '';

/**
 * pino's ISO timestamp (`,"time":"…Z"`), made once per millisecond: under load many lines share
 * one, and formatting the date was a visible part of every line.
 */
function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/**
 * One root logger per process; components take children with their own bindings. Without a
 * `destination` it writes to stdout, one write per turn of the event loop, never waiting for the
 * reader: up to `bufferMaxBytes` (the process's LOG_BUFFER_MAX_BYTES) are held for a reader that
 * is behind, and lines past that are dropped and counted (`droppedLogLines`).
 */
export function createLogger(opts: { name: string; level?: string; destination?: pino.DestinationStream; bufferMaxBytes?: number }): Logger {
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
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  const logger = pino(options, opts.destination ?? new TurnBatchedDestination(stdoutWriter(opts.bufferMaxBytes)));
  writePlainValuesAsTheyAre(logger);
  return logger;
}

/** The redacted paths that censor a key's whole value (`token`), as opposed to what lies below one. */
const wholeValuePaths = new Set(redactPaths.filter((p) => !p.includes('.')));

type Stringifier = (value: unknown, safe?: unknown) => string | undefined;

/**
 * pino's redaction copies and walks every value a path may reach below, a string or a number
 * too (its redactor is not strict), and the `*.` paths reach below every key: every binding and
 * every field of every line went through it. A value that is not an object has nothing below
 * it, so it is written as it is; objects are redacted as before, and a path that censors a whole
 * value (`token`) still does.
 */
function writePlainValuesAsTheyAre(logger: Logger): void {
  const { stringifiersSym, stringifySym, wildcardFirstSym } = pino.symbols;
  const internals = logger as unknown as Record<symbol, unknown>;
  const plain = internals[stringifySym] as Stringifier;
  const stringifiers = internals[stringifiersSym] as Record<string | symbol, Stringifier | undefined>;
  for (const key of [...Object.keys(stringifiers), wildcardFirstSym]) {
    const redact = stringifiers[key];
    if (!redact || (typeof key === 'string' && wholeValuePaths.has(key))) continue;
    stringifiers[key] = (value, safe) => (typeof value === 'object' && value !== null ? redact(value, safe) : plain(value, safe));
  }
}

/**
 * A child logger that writes the values of `keys` without redaction: for values its own
 * serializers build from named fields (the access log's `req` and `res`), which no redacted path
 * can reach. Redaction copies and walks every object a line carries (the `*.` paths apply under
 * any key), a few percent of a request's CPU for these two; every other key is redacted as before.
 */
export function childWithPlainKeys(logger: Logger, bindings: Record<string, unknown>, options: ChildLoggerOptions, keys: readonly string[]): Logger {
  const child = logger.child(bindings, options);
  // pino's per-key stringifiers (what its redaction installs); Fastify reads pino.symbols too.
  const { stringifiersSym, stringifySym } = pino.symbols;
  const internals = child as unknown as Record<symbol, unknown>;
  const plain = internals[stringifySym];
  internals[stringifiersSym] = Object.assign(Object.create(null) as object, internals[stringifiersSym], Object.fromEntries(keys.map((k) => [k, plain])));
  return child;
}
