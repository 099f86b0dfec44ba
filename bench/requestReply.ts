/**
 * Request/reply cost of the message hop: latency (p50, p99) and throughput of GET /v1/programs
 * through the gateway in distributed mode (gateway → Kafka → program-catalog → Postgres → Kafka
 * → gateway), next to a direct HTTP call to a trivial Fastify handler measured in the same run.
 *
 *   node bench/requestReply.ts [--requests 2000] [--concurrency 1,16]
 *
 * Needs Kafka, the registry and Postgres (make infra-up). Prints numbers; asserts nothing.
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { freePort, startDistributedSystem, SANDBOX_CLIENT_TOKEN } from '@efs/testing';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '1,16' } } });
const total = Number(values.requests);
const levels = values.concurrency.split(',').map(Number);

interface Result {
  p50: number;
  p99: number;
  max: number;
  rps: number;
  errors: number;
}

async function measure(url: string, headers: Record<string, string>, n: number, concurrency: number): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const t0 = performance.now();
      const r = await fetch(url, { headers });
      await r.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (r.status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { p50: q(0.5), p99: q(0.99), max: latencies.at(-1)!, rps: latencies.length / elapsed, errors };
}

const fmt = (r: Result) => `p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  max ${r.max.toFixed(1)} ms  ${r.rps.toFixed(0)} req/s  errors ${r.errors}`;

// The sandbox client token's rate limit (1,200/min) would turn most of the run into 429s.
const sys = await startDistributedSystem({ LOG_LEVEL: 'warn', RATE_LIMIT_CLIENT: '100000000' });
const direct = Fastify();
const body = (await (await fetch(`${sys.urls.public}/v1/programs`, { headers: { authorization: `Bearer ${SANDBOX_CLIENT_TOKEN}` } })).json()) as unknown;
direct.get('/v1/programs', async () => body);
const port = await freePort();
await direct.listen({ port, host: '127.0.0.1' });

try {
  const gatewayUrl = `${sys.urls.public}/v1/programs`;
  const directUrl = `http://127.0.0.1:${port}/v1/programs`;
  const auth = { authorization: `Bearer ${SANDBOX_CLIENT_TOKEN}` };
  await measure(gatewayUrl, auth, 200, 4); // warm-up: connections, JIT, consumer fetch sessions
  await measure(directUrl, {}, 200, 4);
  console.log(`command: node bench/requestReply.ts --requests ${total} --concurrency ${levels.join(',')}`);
  console.log(`GET /v1/programs, ${total} requests per row, same machine, same run`);
  for (const c of levels) {
    const g = await measure(gatewayUrl, auth, total, c);
    const d = await measure(directUrl, {}, total, c);
    console.log(`concurrency ${String(c).padStart(3)}  gateway→Kafka→catalog  ${fmt(g)}`);
    console.log(`concurrency ${String(c).padStart(3)}  direct Fastify         ${fmt(d)}`);
    console.log(`concurrency ${String(c).padStart(3)}  ratio gateway/direct   p50 ×${(g.p50 / d.p50).toFixed(1)}  p99 ×${(g.p99 / d.p99).toFixed(1)}  throughput ×${(d.rps / g.rps).toFixed(1)} lower`);
  }
} finally {
  await direct.close();
  await sys.stop();
}
