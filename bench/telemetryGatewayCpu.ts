/**
 * The gateway's own work for a telemetry batch, in one process and without a network, for CPU
 * comparisons that a busy shared machine does not blur: the bench's 1,000-item BATTERY bodies
 * (as bench/telemetryCloud.ts builds them) are JSON-parsed, handled by the gateway's telemetry
 * handler (validation, device lookup, readings, one message per partition), and each publish
 * is encoded as the Kafka transport does it (Avro values, then kafkajs's produce request: record
 * batches, CRC32C). With --body, each body is first handled as the HTTP edge does (libs/http):
 * its 64 kB chunks joined and decoded, the input guard's depth scan, Fastify's JSON parser (secure-json-parse)
 * as the edge takes it, the input guard's text check. Prints CPU ms per 1,000 readings
 * (process.cpuUsage, after a warm-up), the median of several rounds. What it leaves out: Fastify's
 * routing and reply, HTTP, the socket writes, the broker's answer, tracing.
 *
 *   node bench/telemetryGatewayCpu.ts [--batches 300] [--rounds 5] [--body]
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { type ReadingsTopic, type Principal } from '@efs/contracts';
import { AvroCodec, type Transport } from '@efs/messaging';
import { partitionOfKey } from '../libs/messaging/src/partitioner.ts';
import { badTextError, jsonDeeperThan, jsonMayHoldBadText, MAX_JSON_DEPTH } from '../libs/http/src/inputGuard.ts';
import { telemetryIngestHandler } from '../services/gateway/src/handlers/telemetryIngest.ts';
import { DeviceDirectory } from '../services/gateway/src/telemetry/deviceDirectory.ts';

const { values } = parseArgs({ options: { batches: { type: 'string', default: '300' }, rounds: { type: 'string', default: '5' }, body: { type: 'boolean', default: false } } });
const BATCHES = Number(values.batches);
const ROUNDS = Number(values.rounds);
const DEVICES = 1000;
const PARTITIONS = 12;
const INTEGRATOR = 'sandbox-integrator';

const require = createRequire(import.meta.url);
const produceRequest = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (opts: object) => { encode(): Promise<{ buffer: Buffer }> };

const directory = new DeviceDirectory();
const devices = Array.from({ length: DEVICES }, (_, i) => `c0-d${i}`);
for (const id of devices) directory.apply({ integrator_id: INTEGRATOR, id, site_id: `c0-s${Math.floor(Number(id.slice(4)) / 100)}`, updated_at: '2024-05-01T00:00:00.000Z', deleted: false });

const codec = new AvroCodec();
let bytes = 0;
const transport = {
  partitioner: async () => (key: string) => partitionOfKey(key, PARTITIONS),
  publishBatch: async (topic: typeof ReadingsTopic, messages: readonly { key: string; partition?: number; value: unknown }[]) => {
    const partitions = [];
    for (const m of messages) partitions.push({ partition: m.partition!, messages: [{ key: m.key, value: await codec.encode(topic, m.value), headers: {} }] });
    const request = produceRequest({ acks: -1, timeout: 5000, topicData: [{ topic: topic.name, partitions }] });
    bytes += (await request.encode()).buffer.length;
  },
} as unknown as Transport;

const handle = telemetryIngestHandler({ transport, directory, timeoutMs: 5000, telemetryRetentionDays: undefined });
const principal = { integrator_id: INTEGRATOR } as Principal;

/** Body of batch `slot`, as telemetryCloud.ts builds it. */
function body(slot: number): string {
  const baseStart = Date.now() - 2 * 86_400_000;
  const items = [];
  for (let i = 0; i < 1000; i++) {
    const n = slot * 1000 + i;
    items.push({
      device_id: devices[n % DEVICES], start_time: new Date(baseStart + Math.floor(n / DEVICES) * 300_000).toISOString(), duration_s: 300, last_is_online: true, last_mode: 'SELF_CONSUMPTION',
      battery_last_power_charge_w: 0, battery_last_power_discharge_w: 1800 + (n % 700), battery_total_energy_charge_wh: 0, battery_total_energy_discharge_wh: 150 + (n % 60),
      battery_last_state_of_charge_percentage: 40 + (n % 50), battery_last_stored_energy_wh: 5400, battery_last_capacity_energy_wh: 13500, home_last_power_w: 2500, solar_last_power_w: 700,
    });
  }
  return JSON.stringify({ telemetry: items });
}

const bodies = Array.from({ length: BATCHES }, (_, s) => Buffer.from(body(s)));
/** A body as the socket delivers it: 64 kB chunks. */
const chunked = bodies.map((b) => Array.from({ length: Math.ceil(b.length / 65_536) }, (_, i) => b.subarray(i * 65_536, (i + 1) * 65_536)));

/** Fastify's JSON parser as libs/http takes it (secure-json-parse, prototype poisoning an error). */
const parseJson = Fastify().getDefaultJsonParser('error', 'error');

/** The body's way through the HTTP edge before the handler (libs/http: content-type parser, input guard). */
function edgeParse(chunks: Buffer[]): { telemetry: unknown[] } {
  const text = Buffer.concat(chunks).toString('utf8');
  if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw new Error('too deep');
  let parsed: { telemetry: unknown[] } | undefined;
  parseJson(undefined as never, text, (err, body) => {
    if (err) throw err;
    parsed = body as { telemetry: unknown[] };
  });
  if (badTextError({ params: {}, query: {}, body: jsonMayHoldBadText(text) ? parsed : undefined })) throw new Error('bad text');
  return parsed!;
}

async function round(): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < bodies.length; i++) {
    const parsed = values.body ? edgeParse(chunked[i]!) : (JSON.parse(bodies[i]!.toString('utf8')) as { telemetry: unknown[] });
    const answer = await handle(principal, 'INTERVAL', parsed.telemetry);
    if (answer.results.length !== 1000 || answer.results.some((r) => r.status !== 'OK')) throw new Error('a reading was not OK');
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / BATCHES;
}

await round(); // warm-up
const ms: number[] = [];
for (let r = 0; r < ROUNDS; r++) ms.push(await round());
ms.sort((a, b) => a - b);
console.log(`gateway telemetry work in-process${values.body ? ' (with the edge\'s body handling)' : ''}: ${BATCHES} batches of 1,000 readings x ${ROUNDS} rounds; CPU ms per 1,000 readings: median ${ms[Math.floor(ms.length / 2)]!.toFixed(2)} (min ${ms[0]!.toFixed(2)}, max ${ms.at(-1)!.toFixed(2)}); produce request ${(bytes / (BATCHES * (ROUNDS + 1))).toFixed(0)} bytes a batch`);
