/**
 * Request/reply latency of the Kafka transport alone (no HTTP, no database) for several fetch
 * wait settings, to choose maxWaitTimeInMs. Needs Kafka and the registry (make infra-up).
 *
 *   node bench/messagingLatency.ts [--requests 200] [--waits 10,50,500,5000]
 */
import { parseArgs } from 'node:util';
import { allTopics, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { KafkaTransport } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl } from '@efs/testing';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '200' }, waits: { type: 'string', default: '10,50,500,5000' } } });
const n = Number(values.requests);
const logger = createLogger({ name: 'bench', level: 'silent' });
const request: RequestMessage = { op: 'ping', principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null }, params: {}, query: {}, body: null };

console.log(`command: node bench/messagingLatency.ts --requests ${n} --waits ${values.waits}`);
for (const wait of values.waits.split(',').map(Number)) {
  const prefix = `bench${Date.now()}.`;
  const make = (replyInstanceId?: string) =>
    new KafkaTransport({ brokers: [testKafkaBrokers()], clientId: 'bench', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix, maxWaitTimeInMs: wait, ...(replyInstanceId ? { replyInstanceId } : {}) });
  const server = make();
  const caller = make('bench');
  await server.start();
  await caller.start();
  await server.serve('catalog', async () => ({ status: 200, body: '[]' }));
  for (let i = 0; i < 20; i++) await caller.request('catalog', request, { timeoutMs: 10_000 });
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await caller.request('catalog', request, { timeoutMs: 10_000, key: `k${i}` });
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(2);
  console.log(`maxWaitTimeInMs ${String(wait).padStart(5)}  p50 ${q(0.5)} ms  p90 ${q(0.9)} ms  p99 ${q(0.99)} ms  max ${lat.at(-1)!.toFixed(2)} ms`);
  await caller.stop();
  await server.stop();
  await deleteTopicsWithPrefix(prefix);
}
