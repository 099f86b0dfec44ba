import { Partitioners, type ICustomPartitioner } from 'kafkajs';

/**
 * Kafka's murmur2 (the Java client's `Utils.murmur2`, which kafkajs's DefaultPartitioner
 * reproduces with 64-bit Long arithmetic) in 32-bit integer arithmetic: Math.imul wraps as Java's
 * int multiplication does. Several times cheaper per key than kafkajs's, which matters when a
 * producer places every reading of a request itself.
 */
export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const length = data.length;
  const m = 0x5bd1e995;
  let h = 0x9747b28c ^ length;
  const tail = length & ~3;
  for (let i = 0; i < tail; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) h = Math.imul(h ^ data[tail]!, m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}

/** The partition Kafka's default partitioner gives a keyed record among `count` partitions. */
export const partitionOfKey = (key: string | Buffer, count: number): number => (murmur2(key) & 0x7fffffff) % count;

/**
 * The producer's partitioner: kafkajs's DefaultPartitioner (a message's own partition, else its
 * key's, else round robin over partitions with a leader), with the key's partition from
 * partitionOfKey. kafkajs's hashes with 64-bit Long objects and lists the available partitions
 * for every message, keyed or not: 5.5% of the CPU of `make bench-messaging --load` (caller and
 * server), 0.4% with this one.
 */
export const keyPartitioner: ICustomPartitioner = () => {
  const unkeyed = Partitioners.DefaultPartitioner();
  return (args) => {
    const { message, partitionMetadata } = args;
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) return partitionOfKey(message.key, partitionMetadata.length);
    return unkeyed(args);
  };
};
