import { describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { CatalogOperations } from '@efs/api';
import { initTracing } from '@efs/telemetry';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';

const run = await tierAvailable('postgres');
const exporter = new InMemorySpanExporter();
initTracing({ serviceName: 'efs-test', exporter });

describe.runIf(run)('one trace across HTTP, messaging and SQL', () => {
  const t = useTestSystem();

  it('continues the caller trace through the gateway, the request message, the handler and its SQL', async () => {
    // A utility's new program: the catalog writes it (reads such as GET /v1/programs run no SQL).
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    exporter.reset();
    const r = await t.utility.post('/v1/programs', { name: 'Traced', eligible_device_types: ['BATTERY'], zip_codes: ['69001'] }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(r.status).toBe(200);
    const spans = await waitFor(() => {
      const s = exporter.getFinishedSpans().filter((x: ReadableSpan) => x.spanContext().traceId === traceId);
      return s.some((x) => x.name === 'POST /v1/programs') ? s : undefined;
    });
    const names = spans.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['POST /v1/programs', `efs.catalog.requests request ${CatalogOperations.createUtilityProgram.name}`, 'efs.catalog.requests handle']));
    expect(names.some((n) => n.startsWith('sql '))).toBe(true);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const handle = spans.find((s) => s.name === 'efs.catalog.requests handle')!;
    const parentId = handle.parentSpanContext?.spanId;
    expect(byId.get(parentId!)?.name).toBe(`efs.catalog.requests request ${CatalogOperations.createUtilityProgram.name}`);
    const sql = spans.find((s) => s.name.startsWith('sql '))!;
    expect(byId.has(sql.parentSpanContext!.spanId)).toBe(true);
    // The program's announcement leaves through the catalog's outbox later, from the relay: its
    // publish and every consumer's processing still belong to the request's trace.
    const later = await waitFor(() => {
      const s = exporter.getFinishedSpans().filter((x: ReadableSpan) => x.spanContext().traceId === traceId);
      // The in-process publish ends once every consumer has handled the message: wait for both.
      return s.some((x) => x.name === 'efs.catalog.programs process') && s.some((x) => x.name === 'efs.catalog.programs publish') ? s : undefined;
    });
    const all = new Map(later.map((s) => [s.spanContext().spanId, s]));
    const publish = later.find((s) => s.name === 'efs.catalog.programs publish')!;
    expect(publish).toBeDefined();
    for (const consumed of later.filter((s) => s.name === 'efs.catalog.programs process')) expect(all.get(consumed.parentSpanContext!.spanId)?.name).toBe('efs.catalog.programs publish');
  });
});
