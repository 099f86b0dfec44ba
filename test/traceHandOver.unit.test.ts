import { afterAll, describe, expect, it } from 'vitest';
import { trace, type SpanContext } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { continueHandedOver, extractTraceContext, handOverTrace, inHandedOverSpan, initTracing, injectTraceHeaders, inSpan, shutdownTracing } from '@efs/telemetry';

/**
 * The in-process transport hands a request's span context to its handler (handOverTrace,
 * continueHandedOver, or inHandedOverSpan as the transport does) instead of writing a traceparent
 * and parsing it back: the handler must continue the same trace as it would from the header,
 * whether spans are recorded or not.
 */
const incoming = {
  none: undefined,
  sampled: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
  unsampled: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' },
  'with tracestate': { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque,other=1' },
};

/** What a handler sees, both ways, for a request sent from inside a caller's span. */
async function bothWays(headers: Record<string, string> | undefined) {
  return inSpan('caller', headers ? { parent: extractTraceContext(headers) } : {}, async () => {
    const viaHeader = extractTraceContext(injectTraceHeaders());
    const handedOver = continueHandedOver(handOverTrace());
    const seen = (parent: typeof viaHeader) => inSpan('handle', { parent }, async () => trace.getActiveSpan()!.spanContext());
    const caller = trace.getActiveSpan()!.spanContext();
    return {
      caller,
      parents: [trace.getSpanContext(viaHeader), trace.getSpanContext(handedOver)] as (SpanContext | undefined)[],
      handlers: [await seen(viaHeader), await seen(handedOver), await inHandedOverSpan('handle', {}, handOverTrace(), async () => trace.getActiveSpan()!.spanContext())],
    };
  });
}

const plain = (sc: SpanContext | undefined) => sc && { ...sc, traceState: sc.traceState?.serialize() };

describe.each([
  ['nothing recorded', () => initTracing({ serviceName: 'efs-test', env: {} })],
  ['spans recorded', () => initTracing({ serviceName: 'efs-test', exporter: new InMemorySpanExporter() })],
])('trace hand-over in one process, %s', (_mode, init) => {
  afterAll(() => shutdownTracing());

  it.each(Object.entries(incoming))('the handler continues the trace as from the traceparent header: %s', async (_name, headers) => {
    await shutdownTracing();
    init();
    const { caller, parents, handlers } = await bothWays(headers);
    expect(parents[0]).toBeDefined();
    expect(plain(parents[1])).toEqual(plain(parents[0]));
    expect(parents[1]!.isRemote).toBe(true);
    if (headers) expect(handlers[1]!.traceId).toBe(headers.traceparent.split('-')[1]);
    for (const handedOver of handlers.slice(1)) {
      expect(handedOver.traceId).toBe(handlers[0]!.traceId);
      expect(handedOver.traceFlags).toBe(handlers[0]!.traceFlags);
      // The handler's work is a span of its own, as from the header.
      expect(handedOver.spanId).not.toBe(caller.spanId);
    }
    expect(handlers[0]!.spanId).not.toBe(caller.spanId);
  });

  it('outside any trace, neither way makes one up', async () => {
    await shutdownTracing();
    init();
    expect(handOverTrace()).toBeUndefined();
    expect(trace.getSpanContext(continueHandedOver(handOverTrace()))).toBeUndefined();
    expect(trace.getSpanContext(extractTraceContext(injectTraceHeaders()))).toBeUndefined();
  });
});
