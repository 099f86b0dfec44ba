import { randomFillSync } from 'node:crypto';
import { context, propagation, trace, isSpanContextValid, SpanKind, SpanStatusCode, TraceFlags, type Context, type Span, type SpanContext, type Attributes } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { AlwaysOffSampler, BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';

export { SpanKind } from '@opentelemetry/api';
export type { Context, SpanContext } from '@opentelemetry/api';

let provider: NodeTracerProvider | undefined;
let recording = false;

/** Whether spans are recorded (an exporter is configured); without it only trace context flows. */
export const tracesRecorded = (): boolean => recording;

/**
 * Starts tracing for this process. The exporter follows the standard variables: OTEL_TRACES_EXPORTER
 * (`otlp`, `console` or `none`, the default here so nothing is sent unless asked) and the
 * OTEL_EXPORTER_OTLP_* endpoint variables read by the OTLP exporter itself. Tests pass their own
 * exporter. Context propagation (W3C trace context) is always on, so trace ids flow through
 * logs and message headers even when nothing is exported. With no exporter no span is started
 * at all (see inSpan): a unit of work arriving from elsewhere gets a trace context of its own
 * (the caller's trace id, or a new one), and the hops inside it share it.
 */
export function initTracing(opts: { serviceName: string; exporter?: SpanExporter; env?: Record<string, string | undefined> }): void {
  if (provider) return;
  const env = opts.env ?? process.env;
  const kind = (env.OTEL_TRACES_EXPORTER ?? 'none').split(',')[0]!.trim();
  const processors = [];
  if (opts.exporter) processors.push(new SimpleSpanProcessor(opts.exporter));
  else if (kind === 'otlp') processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  else if (kind === 'console') processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? opts.serviceName }),
    spanProcessors: processors,
    ...(processors.length === 0 ? { sampler: new AlwaysOffSampler() } : {}),
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  recording = processors.length > 0;
}

export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
  recording = false;
}

export const tracer = () => trace.getTracer('efs');

/** Writes the current (or given) trace context into a carrier of string headers. */
export function injectTraceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** Reads a trace context from message or HTTP headers. */
export function extractTraceContext(headers: Record<string, string | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

/**
 * The current span context, for work this process hands to itself as a message (a request in the
 * in-process transport): `continueHandedOver` reads it back as `extractTraceContext` reads the
 * traceparent `injectTraceHeaders` writes, without writing and parsing the header per hop
 * (test/traceHandOver.unit.test.ts holds the two ways side by side). It does not look at
 * suppressed tracing, which this project never turns on.
 */
export function handOverTrace(): SpanContext | undefined {
  const sc = trace.getSpanContext(context.active());
  return sc && isSpanContextValid(sc) ? sc : undefined;
}

/** The current context continuing a span context handed over (see handOverTrace), remote as an extracted one is. */
export function continueHandedOver(sc: SpanContext | undefined): Context {
  const active = context.active();
  return sc ? trace.setSpanContext(active, { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags, ...(sc.traceState ? { traceState: sc.traceState } : {}), isRemote: true }) : active;
}

/** The trace context headers carry, when they carry one (a `traceparent`); otherwise none, and the current one goes on. */
export function continuedTrace(headers: Record<string, string | undefined> | undefined): Context | undefined {
  return headers?.traceparent ? extractTraceContext(headers) : undefined;
}

/**
 * Runs `fn` inside a new span, ending it with the outcome. Without an exporter it starts no span
 * (a span nobody records still costs its creation, a context switch and its ids per hop): a
 * `parent` taken from elsewhere (a message's or HTTP request's headers, or none there) gets a
 * context of its own, so the logs of the work carry the caller's trace id (a new one when the
 * caller sent none) and a span id of their own; work that continues the current context (the
 * request a handler sends, an event it publishes) runs in it unchanged.
 */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!recording) return untraced(opts.parent, fn);
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * inSpan under the span context handed over (see handOverTrace) as its parent: what inSpan does
 * with `parent: continueHandedOver(sc)`. When nothing is exported that parent is not built: the
 * new context names the handed-over trace (a new one without) and a span id of its own, as
 * untraced would give it.
 */
export function inHandedOverSpan<T>(name: string, opts: { kind?: SpanKind; attributes?: Attributes }, sc: SpanContext | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  if (recording) return inSpan(name, { ...opts, parent: continueHandedOver(sc) }, fn);
  return withOwnSpanId(context.active(), sc?.traceId, fn);
}

/** inSpan when nothing is exported: trace context for the logs and the next hop, no span. */
function untraced<T>(parent: Context | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  const active = context.active();
  const current = trace.getSpan(parent ?? active);
  const known = current !== undefined && isSpanContextValid(current.spanContext());
  if (known && (parent === undefined || parent === active)) return fn(current);
  return withOwnSpanId(parent ?? active, known ? current.spanContext().traceId : undefined, fn);
}

/** Runs fn in a context of its own under `base` when nothing is recorded: trace `traceId` (a new one without), a new span id. */
function withOwnSpanId<T>(base: Context, traceId: string | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = trace.wrapSpanContext({ traceId: traceId ?? randomId(16), spanId: randomId(8), traceFlags: TraceFlags.NONE });
  return context.with(trace.setSpan(base, span), () => fn(span));
}

/** Random bytes for trace and span ids, drawn from a pool refilled in one call (as randomUUID does). */
const idPool = Buffer.alloc(4096);
let idPoolUsed = idPool.length;

function randomId(bytes: 8 | 16): string {
  if (idPoolUsed + bytes > idPool.length) {
    randomFillSync(idPool);
    idPoolUsed = 0;
  }
  const id = idPool.toString('hex', idPoolUsed, (idPoolUsed += bytes));
  // All zeros is the invalid id (W3C trace context); one in 2^64 draws.
  return /[^0]/.test(id) ? id : randomId(bytes);
}

export { addScrapeGauges, initMetrics, meter, scrapeMetrics, secondsHistogram, withDefaultAttribute, SECONDS_BUCKETS } from './metrics.ts';
export type { ObserveGauge, ScrapeCallback, ScrapeGauge } from './scrapeGauges.ts';
export type { Attributes, BatchObservableResult, Counter, Histogram, Meter, ObservableGauge, ObservableResult } from './metrics.ts';
