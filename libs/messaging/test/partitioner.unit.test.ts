import { describe, expect, it } from 'vitest';
import { Partitioners } from 'kafkajs';
import { keyPartitioner, partitionOfKey } from '../src/partitioner.ts';

describe('partitionOfKey', () => {
  it("places every key where kafkajs's default partitioner (the Java client's) places a record keyed by it", () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'sandbox-integrator/c0-d1', 'é', 'ümlaut/größe', '日本語のキー', '🔋/battery-9'];
    for (let i = 0; i < 2000; i++) keys.push(`integrator-${i % 7}/device-${i * 7919}`);
    for (const count of [1, 3, 12, 100]) {
      const partitionMetadata = Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 0 })) as unknown as Parameters<typeof kafkajs>[0]['partitionMetadata'];
      for (const key of keys) expect(partitionOfKey(key, count), `${key} of ${count}`).toBe(kafkajs({ topic: 't', partitionMetadata, message: { key, value: null } }));
    }
  });

  it("is the producer's partitioner for keyed messages, as string or bytes; a message's own partition wins; unkeyed ones spread over the partitions with a leader", () => {
    const ours = keyPartitioner();
    const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({ partitionId, leader: partitionId === 2 ? -1 : 0 })) as unknown as Parameters<typeof ours>[0]['partitionMetadata'];
    const place = (message: Parameters<typeof ours>[0]['message']) => ours({ topic: 't', partitionMetadata, message });
    for (const key of ['a', 'sandbox-integrator/site-1', 'ümlaut/größe']) {
      expect(place({ key, value: null })).toBe(partitionOfKey(key, 6));
      expect(place({ key: Buffer.from(key, 'utf8'), value: null })).toBe(partitionOfKey(key, 6));
      expect(place({ key, value: null, partition: 5 })).toBe(5);
    }
    const unkeyed = new Set(Array.from({ length: 60 }, () => place({ value: null })));
    expect([...unkeyed].sort()).toEqual([0, 1, 3, 4, 5]);
  });
});
