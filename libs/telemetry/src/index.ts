import { context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Span, type Attributes } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { AlwaysOffSampler, BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';

export { SpanKind } from '@opentelemetry/api';
export type { Context } from '@opentelemetry/api';

let provider: NodeTracerProvider | undefined;
let recording = false;

/** Whether spans are recorded (an exporter is configured); without it only trace context flows. */
export const tracesRecorded = (): boolean => recording;

/**
 * Starts tracing for this process. The exporter follows the standard variables: OTEL_TRACES_EXPORTER
 * (`otlp`, `console` or `none`, the default here so nothing is sent unless asked) and the
 * OTEL_EXPORTER_OTLP_* endpoint variables read by the OTLP exporter itself. Tests pass their own
 * exporter. Context propagation (W3C trace context) is always on, so trace ids flow through
 * logs and message headers even when nothing is exported; with no exporter, spans are
 * non-recording (ids and context only, no attributes, events or timings kept), which is most
 * of what tracing costs per request.
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

/** Runs `fn` inside a new span, ending it with the outcome. */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
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
