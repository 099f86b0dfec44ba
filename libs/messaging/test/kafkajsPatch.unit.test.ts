import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
// Importing the transport applies the request queue fix to kafkajs.
import '@efs/messaging';

interface Queue {
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(request: { entry: Entry; expectResponse: boolean; sendRequest: () => void }): void;
  scheduleRequestTimeoutCheck(): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
}
interface Entry { correlationId: number; apiName: string; apiKey: number; apiVersion: number; resolve: (r: unknown) => void; reject: (e: Error) => void }

const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as new (opts: object) => Queue;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const queues: Queue[] = [];

function queue(maxInFlightRequests: number, requestTimeout = 30_000): Queue {
  const q = new RequestQueue({ maxInFlightRequests, requestTimeout, enforceRequestTimeout: requestTimeout < 30_000, clientId: 'test', broker: 'test:9092', logger: silent });
  queues.push(q);
  return q;
}

let nextId = 0;
function request(sent: number[]): { entry: Entry; expectResponse: boolean; sendRequest: () => void; answered: Promise<unknown> } {
  const correlationId = nextId++;
  let resolve!: (r: unknown) => void;
  let reject!: (e: Error) => void;
  const answered = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  return { entry: { correlationId, apiName: 'Fetch', apiKey: 1, apiVersion: 11, resolve, reject }, expectResponse: true, sendRequest: () => sent.push(correlationId), answered };
}
const answer = (q: Queue, correlationId: number) => q.fulfillRequest({ correlationId, payload: Buffer.alloc(0), size: 0 });

afterEach(() => {
  for (const q of queues.splice(0)) q.destroy();
});

describe('kafkajs request queue (patched)', () => {
  it('keeps no timer running once every request is answered (kafkajs rescheduled a 1 ms check forever)', async () => {
    const q = queue(1);
    const sent: number[] = [];
    const r = request(sent);
    q.push(r);
    expect(sent).toEqual([r.entry.correlationId]);
    answer(q, r.entry.correlationId);
    await r.answered;
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request that waited behind the in-flight limit, then stops checking', async () => {
    const q = queue(1);
    const sent: number[] = [];
    const [a, b] = [request(sent), request(sent)];
    q.push(a);
    q.push(b);
    expect(sent).toEqual([a.entry.correlationId]);
    expect(q.pending).toHaveLength(1);
    answer(q, a.entry.correlationId);
    expect(sent).toEqual([a.entry.correlationId, b.entry.correlationId]);
    answer(q, b.entry.correlationId);
    await Promise.all([a.answered, b.answered]);
    expect(q.pending).toHaveLength(0);
    // The check scheduled while b waited runs once more, finds nothing and schedules no other.
    await expect.poll(() => q.throttleCheckTimeoutId, { timeout: 5000 }).toBeNull();
  });

  it('sends a request held back by a broker throttle once the throttle ends', async () => {
    const q = queue(5);
    const sent: number[] = [];
    q.maybeThrottle(20);
    const r = request(sent);
    q.push(r);
    expect(sent).toEqual([]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    await expect.poll(() => sent, { timeout: 5000 }).toEqual([r.entry.correlationId]);
    answer(q, r.entry.correlationId);
    await r.answered;
    await expect.poll(() => q.throttleCheckTimeoutId, { timeout: 5000 }).toBeNull();
  });

  it('still times out a request the broker does not answer', async () => {
    const q = queue(5, 50);
    q.scheduleRequestTimeoutCheck();
    const sent: number[] = [];
    const r = request(sent);
    q.push(r);
    expect(sent).toEqual([r.entry.correlationId]);
    await expect(r.answered).rejects.toThrow(/timed out/);
  });
});

interface KafkaEncoder {
  writeInt8(v: number): KafkaEncoder;
  writeInt32(v: number): KafkaEncoder;
  writeString(v: string): KafkaEncoder;
  writeBytes(v: Buffer): KafkaEncoder;
  readonly buffer: Buffer;
  readonly buf: Buffer;
}

describe('kafkajs encoder (patched: grows without zero-filling)', () => {
  const Encoder = createRequire(import.meta.url)('kafkajs/src/protocol/encoder.js') as new (initialSize?: number) => KafkaEncoder;

  it('encodes the same bytes across many growths as a buffer written by hand', () => {
    const e = new Encoder(4);
    const expected: Buffer[] = [];
    for (let i = 0; i < 200; i++) {
      const blob = Buffer.alloc(37 * i, i % 251);
      e.writeInt8(i % 100).writeInt32(i * 1000).writeBytes(blob).writeString(`s${i}`);
      const int32 = Buffer.alloc(4);
      int32.writeInt32BE(i * 1000);
      const len = Buffer.alloc(4);
      len.writeInt32BE(blob.length);
      const strLen = Buffer.alloc(2);
      strLen.writeInt16BE(`s${i}`.length);
      expected.push(Buffer.from([i % 100]), int32, len, blob, strLen, Buffer.from(`s${i}`));
    }
    expect(e.buffer.equals(Buffer.concat(expected))).toBe(true);
    expect(e.buf.length).toBeGreaterThan(e.buffer.length);
  });
});
