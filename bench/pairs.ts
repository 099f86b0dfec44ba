/**
 * A system's throughput as a share of the bare reference's, taken pair by pair: each round's
 * measurement beside the bare one measured next to it (bench/run.ts --rounds), and the median of
 * those shares. Pure, for bench/run.ts and its unit test.
 */

export interface Measured {
  round: number;
  reqPerS: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The system's req/s as a % of its own round's bare req/s, round by round; a round without its bare run has none. */
export function pairedShares(system: readonly Measured[], bare: readonly Measured[]): number[] {
  return system.flatMap((s) => {
    const b = bare.find((x) => x.round === s.round);
    return b && b.reqPerS > 0 ? [(100 * s.reqPerS) / b.reqPerS] : [];
  });
}
