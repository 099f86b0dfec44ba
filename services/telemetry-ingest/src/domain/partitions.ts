/** Readings are partitioned by UTC day of their start. */
export const DAY_MS = 24 * 3600 * 1000;

/** The UTC day (its first millisecond) a time falls in. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** Partition name suffix of a day: `p20261124`. */
export const partitionSuffix = (day: number): string => `p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;

/** The day a partition suffix names, or undefined for a table that is not a day partition. */
export function dayOfSuffix(name: string): number | undefined {
  const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : undefined;
}

/** The days from `from` to `to` (inclusive), each as its first millisecond. */
export function daysBetween(from: number, to: number): number[] {
  const out: number[] = [];
  for (let d = dayOf(from); d <= dayOf(to); d += DAY_MS) out.push(d);
  return out;
}
