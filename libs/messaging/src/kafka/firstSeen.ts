/** Observations kept per partition: past it, the second oldest goes (the oldest bounds the age best). */
const MAX_OBSERVATIONS = 64;

/**
 * When the records of a partition were first known to exist: each lag read notes the partition's
 * end offset and when it was read; the record at offset `o` existed at the first read whose end
 * was above `o`. That time is a lower bound of the record's age (it may have been written earlier,
 * between two reads), used for a record the consumer has not fetched yet. Offsets asked only grow
 * (a consumer's position), so reads at or below them are dropped.
 */
export class FirstSeen {
  private readonly reads: { at: number; end: number }[] = [];

  /** The partition's end offset was `end` at `at` (epoch ms). */
  saw(end: number, at: number): void {
    const last = this.reads.at(-1);
    if (last && end <= last.end) return;
    this.reads.push({ at, end });
    if (this.reads.length > MAX_OBSERVATIONS) this.reads.splice(1, 1);
  }

  /** The first time the record at `offset` was known to exist; undefined when no read saw it. */
  since(offset: number): number | undefined {
    while (this.reads.length > 0 && this.reads[0]!.end <= offset) this.reads.shift();
    return this.reads[0]?.at;
  }
}
