/**
 * The Kafka transport's request path alone (no HTTP, no database): a caller transport and a
 * serving one in this process, on the shared broker and registry (make infra-up).
 *
 *   node bench/messagingLatency.ts [--requests 200] [--waits 10,50,500,5000]
 *       one request at a time, for several fetch waits (maxWaitTimeInMs): p50, p90, p99, max
 *   node bench/messagingLatency.ts --load [--connections 64] [--duration 10] [--rate 500] [--body 2000]
 *       `connections` requests kept in flight for `duration` seconds (with --rate: that many a
 *       second, latency counted from when each was due), each answered with a body of `body`
 *       bytes: answers/s, p50, p99, the broker requests per answer by API (caller and server
 *       together: what the broker's CPU follows), and CPU ms per answer of this process and of
 *       the Kafka broker (read from /proc; the broker is shared with whatever else runs).
 */
import { parseArgs } from 'node:util';
import { allTopics, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { KafkaTransport } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl } from '@efs/testing';
import { cpuBetween, infrastructureSources, pidSource, snapshot } from './procCpu.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    waits: { type: 'string', default: '10,50,500,5000' },
    load: { type: 'boolean', default: false },
    connections: { type: 'string', default: '64' },
    duration: { type: 'string', default: '10' },
    rate: { type: 'string' },
    body: { type: 'string', default: '2000' },
  },
});
const logger = createLogger({ name: 'bench', level: 'silent' });
const request: RequestMessage = { op: 'ping', principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null }, params: {}, query: {}, body: null };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantiles(lat: number[]): (p: number) => string {
  lat.sort((a, b) => a - b);
  return (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(2) : '-');
}

async function pair(prefix: string, maxWaitTimeInMs?: number): Promise<{ server: KafkaTransport; caller: KafkaTransport; close(): Promise<void> }> {
  const make = (replyInstanceId?: string) =>
    new KafkaTransport({
      brokers: [testKafkaBrokers()],
      clientId: 'bench',
      registryUrl: testRegistryUrl(),
      logger,
      topics: allTopics,
      topicPrefix: prefix,
      ...(maxWaitTimeInMs !== undefined ? { maxWaitTimeInMs } : {}),
      ...(replyInstanceId ? { replyInstanceId } : {}),
    });
  const server = make();
  const caller = make('bench');
  await server.start();
  await caller.start();
  return {
    server,
    caller,
    close: async () => {
      await caller.stop();
      await server.stop();
      await deleteTopicsWithPrefix(prefix);
    },
  };
}

async function latencyByWait(): Promise<void> {
  const n = Number(values.requests);
  console.log(`command: node bench/messagingLatency.ts --requests ${n} --waits ${values.waits}`);
  for (const wait of values.waits.split(',').map(Number)) {
    const { server, caller, close } = await pair(`bench${Date.now()}.`, wait);
    await server.serve('catalog', async () => ({ status: 200, body: '[]' }));
    for (let i = 0; i < 20; i++) await caller.request('catalog', request, { timeoutMs: 10_000 });
    const lat: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await caller.request('catalog', request, { timeoutMs: 10_000, key: `k${i}` });
      lat.push(performance.now() - t0);
    }
    const q = quantiles(lat);
    console.log(`maxWaitTimeInMs ${String(wait).padStart(5)}  p50 ${q(0.5)} ms  p90 ${q(0.9)} ms  p99 ${q(0.99)} ms  max ${lat.at(-1)!.toFixed(2)} ms`);
    await close();
  }
}

/** Sum of two transports' request counts, minus a snapshot taken before. */
function requestsSince(before: Record<string, number>, transports: KafkaTransport[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of transports) for (const [api, n] of Object.entries(t.brokerRequests())) out[api] = (out[api] ?? 0) + n;
  for (const [api, n] of Object.entries(before)) out[api] = (out[api] ?? 0) - n;
  return out;
}

async function load(): Promise<void> {
  const connections = Number(values.connections);
  const durationS = Number(values.duration);
  const rate = values.rate ? Number(values.rate) : undefined;
  const body = JSON.stringify('x'.repeat(Math.max(0, Number(values.body) - 2)));
  console.log(
    `command: node bench/messagingLatency.ts --load --connections ${connections} --duration ${durationS}${rate ? ` --rate ${rate}` : ''} --body ${values.body}`,
  );
  const prefix = `bench${Date.now()}.`;
  const { server, caller, close } = await pair(prefix);
  await server.serve('catalog', async () => ({ status: 200, body }));
  const lat: number[] = [];
  let failed = 0;
  const ask = async (due: number, record: boolean) => {
    try {
      await caller.request('catalog', request, { timeoutMs: 10_000 });
      if (record) lat.push(performance.now() - due);
    } catch {
      failed++;
    }
  };
  /** Keeps `connections` requests in flight (or sends `rate` a second, at most `connections` in flight) until `until`. */
  const drive = async (until: number, record: boolean) => {
    if (rate === undefined) {
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (performance.now() < until) await ask(performance.now(), record);
        }),
      );
      return;
    }
    const start = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; ; i++) {
      const due = start + (i * 1000) / rate;
      if (due >= until) break;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      while (inFlight.size >= connections) await Promise.race(inFlight);
      const p = ask(due, record).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  };
  await drive(performance.now() + 3000, false);
  await sleep(500);
  const cpuSources = [pidSource('bench (caller + server)', process.pid), ...infrastructureSources().filter((s) => s.name === 'kafka')];
  const cpuBefore = snapshot(cpuSources);
  const requestsBefore = requestsSince({}, [caller, server]);
  const t0 = performance.now();
  const fromUs = process.hrtime.bigint() / 1000n;
  await drive(t0 + durationS * 1000, true);
  const wallS = (performance.now() - t0) / 1000;
  const toUs = process.hrtime.bigint() / 1000n;
  const cpu = cpuBetween(cpuBefore, snapshot(cpuSources));
  const requests = requestsSince(requestsBefore, [caller, server]);
  const answers = lat.length;
  const q = quantiles(lat);
  const total = Object.values(requests).reduce((a, b) => a + b, 0);
  console.log(`${(answers / wallS).toFixed(0)} answers/s  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  failed ${failed}`);
  console.log(
    `broker requests per answer ${(total / answers).toFixed(3)}: ${Object.entries(requests)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([api, n]) => `${api} ${(n / answers).toFixed(3)}`)
      .join(', ')}`,
  );
  console.log(`CPU ms per answer: ${[...cpu].map(([name, ms]) => `${name} ${(ms / answers).toFixed(3)}`).join(', ')}`);
  // For a profile of this process (node --cpu-prof): bench/profileSummary.ts FILE --from … --to …
  console.log(`measured window (CLOCK_MONOTONIC µs): --from ${fromUs} --to ${toUs}`);
  await close();
}

if (values.load) await load();
else await latencyByWait();
