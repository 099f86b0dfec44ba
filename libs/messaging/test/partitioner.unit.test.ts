import { describe, expect, it } from 'vitest';
import { Partitioners } from 'kafkajs';
import { partitionOfKey } from '../src/partitioner.ts';

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
});
