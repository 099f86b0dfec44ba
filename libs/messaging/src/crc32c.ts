/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka's record batches,
 * computed from eight tables ("slicing by 8"): one step per 8 bytes (8 table lookups), instead of
 * kafkajs's step per byte (one lookup each). Same value for every input; measured ~5x faster
 * (0.08 vs 0.37–0.50 ms for a ~120 kB produce request's batches, bench/PROFILE.md).
 */
const POLY = 0x82f63b78;

/** Table k (k = 0..7) at [k * 256 + b]: the CRC contribution of byte b followed by k zero bytes. */
const T = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let c = b;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[b] = c;
}
for (let b = 0; b < 256; b++) {
  for (let k = 1; k < 8; k++) {
    const prev = T[(k - 1) * 256 + b]!;
    T[k * 256 + b] = (prev >>> 8) ^ T[prev & 0xff]!;
  }
}

/** CRC-32C of `bytes`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array): number {
  let crc = -1;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n & 7);
  while (i < end8) {
    const a = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc =
      T[1792 + (a & 0xff)]! ^
      T[1536 + ((a >>> 8) & 0xff)]! ^
      T[1280 + ((a >>> 16) & 0xff)]! ^
      T[1024 + (a >>> 24)]! ^
      T[768 + bytes[i + 4]!]! ^
      T[512 + bytes[i + 5]!]! ^
      T[256 + bytes[i + 6]!]! ^
      T[bytes[i + 7]!]!;
    i += 8;
  }
  while (i < n) crc = T[(crc ^ bytes[i++]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
