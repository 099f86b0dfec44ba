import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
// Importing the transport applies the request queue fix to kafkajs.
import '@efs/messaging';
import { crc32c } from '../src/crc32c.ts';
import { KAFKAJS_VERSION, KafkajsCrc32C } from '../src/kafka/kafkajsPatch.ts';

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

describe('CRC-32C (slicing by 8, in kafkajs record batches)', () => {
  const req = createRequire(import.meta.url);
  const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
  const iota = (n: number, f: (i: number) => number) => Buffer.from(Array.from({ length: n }, (_, i) => f(i)));

  it('gives the known check values (RFC 3720 B.4, and "123456789")', () => {
    expect(crc32c(Buffer.alloc(0))).toBe(0);
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32, 0x00))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43);
    expect(crc32c(iota(32, (i) => i))).toBe(0x46dd794e);
    expect(crc32c(iota(32, (i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(hex('01c00000 00000000 00000000 00000000 14000000 00000400 00000014 00000018 28000000 00000000 02000000 00000000'))).toBe(0xd9963a56);
  });

  it('agrees with kafkajs\'s own function on random buffers of every length up to 300 bytes and a few large ones', () => {
    let x = 0x2545f491;
    const byte = () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    };
    const lengths = [...Array.from({ length: 301 }, (_, n) => n), 4095, 65_536, 120_007];
    for (const n of lengths) {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = byte();
      expect([n, crc32c(b)]).toEqual([n, KafkajsCrc32C(b)]);
      // A view into a larger buffer, not starting at its first byte.
      const view = b.subarray(n >> 2);
      expect([n, crc32c(view)]).toEqual([n, KafkajsCrc32C(view)]);
    }
  });

  it('is the function kafkajs\'s record batches are built with', async () => {
    expect(req('kafkajs/src/protocol/recordBatch/crc32C/index.js')).toBe(crc32c);
    const { RecordBatch } = req('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (opts: object) => Promise<{ buffer: Buffer }> };
    const Record = req('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (opts: object) => unknown;
    const records = [Record({ offsetDelta: 0, key: Buffer.from('k'), value: Buffer.alloc(5000, 7), headers: {} })];
    const batch = (await RecordBatch({ records, timestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000 })).buffer;
    // firstOffset (8), length (4), partitionLeaderEpoch (4), magic (1), crc (4), then the body the crc covers.
    const body = batch.subarray(21);
    expect(batch.readUInt32BE(17)).toBe(KafkajsCrc32C(body));
  });
});

describe('kafkajs patches applied once', () => {
  it('a second evaluation of the patch module (a fresh module graph) changes nothing and does not throw', async () => {
    const req = createRequire(import.meta.url);
    // The record batch module is loaded by now (as in a process that has produced): patching the CRC-32C again would throw.
    req('kafkajs/src/protocol/recordBatch/v0/index.js');
    const Queue = req('kafkajs/src/network/requestQueue/index.js') as { prototype: Record<string, unknown> };
    const Encoder = req('kafkajs/src/protocol/encoder.js') as { prototype: Record<string, unknown> };
    const patched = () => [Queue.prototype.scheduleCheckPendingRequests, Queue.prototype.scheduleRequestTimeoutCheck, Encoder.prototype.ensureAvailable];
    const before = patched();
    vi.resetModules();
    const again = (await import('../src/kafka/kafkajsPatch.ts')) as { KafkajsCrc32C: unknown };
    expect(patched()).toEqual(before);
    expect(again.KafkajsCrc32C).toBe(KafkajsCrc32C);
    expect(req('kafkajs/src/protocol/recordBatch/crc32C/index.js')).toBe(crc32c);
  });
});

describe('kafkajs version', () => {
  it('is the one the patches were checked against: a new version fails here until kafkajsPatch.ts (and endOffsets.ts) are checked against its code', () => {
    const { version } = createRequire(import.meta.url)('kafkajs/package.json') as { version: string };
    expect(version).toBe(KAFKAJS_VERSION);
  });

  it('leaves the consumer\'s commits to the public API (offsetCommits.ts): its runner and group are kafkajs\'s own', async () => {
    const req = createRequire(import.meta.url);
    const Runner = req('kafkajs/src/consumer/runner.js') as { prototype: Record<string, { toString(): string }> };
    const ConsumerGroup = req('kafkajs/src/consumer/consumerGroup.js') as { prototype: Record<string, { toString(): string }> };
    expect(Runner.prototype.autoCommitOffsets!.toString()).toContain('this.consumerGroup.commitOffsets()');
    expect(Runner.prototype.stop!.toString()).not.toContain('commit');
    expect(ConsumerGroup.prototype.joinAndSync!.toString()).not.toContain('commit');
  });
});
