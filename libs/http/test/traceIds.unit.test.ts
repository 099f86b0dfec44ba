import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createHttpServer } from '@efs/http';
import { createLogger } from '@efs/logging';
import { extractTraceContext, initTracing, injectTraceHeaders, inSpan } from '@efs/telemetry';

// No exporter (OTEL_TRACES_EXPORTER unset): nothing is recorded, yet every log line of a request
// carries its trace, and the next hop (a message's headers) continues it.
initTracing({ serviceName: 'efs-test', env: {} });

interface Line {
  msg: string;
  trace_id?: string;
  span_id?: string;
  reqId?: string;
}

function server() {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  const app = createHttpServer({ logger: createLogger({ name: 'test', destination }), name: 'public' });
  app.get('/hop', async (req) => {
    req.log.info('in the handler');
    // A message hop: the headers the next service receives, and its handler's span.
    const headers = injectTraceHeaders();
    await inSpan('handle', { parent: extractTraceContext(headers) }, async () => void req.log.info('in the next hop'));
    return { ok: true };
  });
  const get = async (headers: Record<string, string> = {}) => {
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const r = await fetch(`http://127.0.0.1:${port}/hop`, { headers });
    await r.text();
    return r.status;
  };
  return { app, lines, get };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

describe('trace ids in the logs when no trace is exported', () => {
  it("continues the caller's trace: every line of the request and of its next hop has its trace id", async () => {
    const { app, lines, get } = server();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect(await get({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` })).toBe(200);
    await app.close();
    const [handler, hop, access] = ['in the handler', 'in the next hop', 'request completed'].map((m) => lines.find((l) => l.msg === m)!);
    for (const l of [handler, hop, access]) expect(l?.trace_id).toBe(traceId);
    // The server's work and the hop's each have a span id of their own, not the caller's.
    expect(handler!.span_id).toMatch(HEX16);
    expect(new Set([handler!.span_id, hop!.span_id, '00f067aa0ba902b7']).size).toBe(3);
    expect(access!.span_id).toBe(handler!.span_id);
  });

  it('starts a trace for a request that brings none: one id for all its lines, another for the next request', async () => {
    const { app, lines, get } = server();
    await get();
    await get();
    await app.close();
    const byRequest = new Map<string, Set<string | undefined>>();
    for (const l of lines.filter((x) => x.reqId)) byRequest.set(l.reqId!, (byRequest.get(l.reqId!) ?? new Set()).add(l.trace_id));
    expect(byRequest.size).toBe(2);
    const ids = [...byRequest.values()].map((s) => [...s]);
    for (const one of ids) {
      expect(one).toHaveLength(1);
      expect(one[0]).toMatch(HEX32);
    }
    expect(ids[0]![0]).not.toBe(ids[1]![0]);
  });
});
