import type { z } from 'zod';

/** A field's value is acceptable as it is (zod would pass it unchanged). */
type Accepts = (v: unknown) => boolean;

/** Most distinct strings a format check remembers before it starts again. */
const REMEMBERED = 10_000;
/**
 * Longest string a format check remembers: a date-time is at most about 35 characters. Longer
 * ones (which zod may still accept: any number of fraction digits) get zod's verdict each time,
 * so the memory, shared by every request of the process, stays bounded by what clients send.
 */
const REMEMBERED_LENGTH = 64;

interface Def {
  type: string;
  /** A format of the schema's own (z.uuid(), z.iso.datetime(), z.int()), checked without an entry in `checks`. */
  format?: string;
  check?: string;
  innerType?: z.ZodType;
  checks?: { _zod: { def: { check: string; value?: unknown; inclusive?: boolean; minimum?: number; maximum?: number } } }[];
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Number bounds of greater_than/less_than checks, or undefined when a check is of another kind. */
function numberCheck(checks: NonNullable<Def['checks']>): Accepts | undefined {
  const tests: Accepts[] = [];
  for (const c of checks) {
    const { check, value, inclusive } = c._zod.def;
    if (typeof value !== 'number' || (check !== 'greater_than' && check !== 'less_than')) return undefined;
    if (check === 'greater_than') tests.push(inclusive ? (v) => (v as number) >= value : (v) => (v as number) > value);
    else tests.push(inclusive ? (v) => (v as number) <= value : (v) => (v as number) < value);
  }
  return (v) => typeof v === 'number' && Number.isFinite(v) && tests.every((t) => t(v));
}

/** String length bounds of min_length/max_length checks, or undefined when a check is of another kind. */
function lengthCheck(checks: NonNullable<Def['checks']>): Accepts | undefined {
  let [min, max] = [0, Infinity];
  for (const c of checks) {
    const d = c._zod.def;
    if (d.check === 'min_length' && typeof d.minimum === 'number') min = Math.max(min, d.minimum);
    else if (d.check === 'max_length' && typeof d.maximum === 'number') max = Math.min(max, d.maximum);
    else return undefined;
  }
  return (v) => typeof v === 'string' && v.length >= min && v.length <= max;
}

/**
 * Strings the schema checks otherwise (a date-time's format): zod's own verdict, remembered per
 * distinct text (a batch's readings share a few period starts). Only a string zod passes unchanged
 * counts as accepted.
 */
function rememberedCheck(schema: z.ZodType): Accepts {
  const seen = new Map<string, boolean>();
  return (v) => {
    if (typeof v !== 'string') return false;
    let ok = seen.get(v);
    if (ok === undefined) {
      const r = schema.safeParse(v);
      ok = r.success && r.data === v;
      if (v.length > REMEMBERED_LENGTH) return ok;
      if (seen.size >= REMEMBERED) seen.clear();
      seen.set(v, ok);
    }
    return ok;
  };
}

/** What a field accepts as it is, or undefined for a type this check leaves to zod (a record, an enum...). */
function fieldCheck(schema: z.ZodType): Accepts | undefined {
  const def = defOf(schema);
  if (def.type === 'optional' || def.type === 'nullable') {
    const inner = fieldCheck(def.innerType!);
    if (!inner) return undefined;
    return def.type === 'optional' ? (v) => v === undefined || inner(v) : (v) => v === null || inner(v);
  }
  const checks = def.checks ?? [];
  const ownFormat = def.format !== undefined || def.check !== undefined;
  if (def.type === 'string') return (ownFormat ? undefined : lengthCheck(checks)) ?? rememberedCheck(schema);
  if (ownFormat) return undefined;
  if (def.type === 'number') return numberCheck(checks);
  if (def.type === 'boolean') return checks.length === 0 ? (v) => typeof v === 'boolean' : undefined;
  return undefined;
}

/**
 * A field's check for the absent or null value only: its schema's verdict on them, known at once
 * (accepted only when zod passes them unchanged: a default or a transform fills them otherwise).
 */
function emptyOnly(schema: z.ZodType): Accepts {
  const unchanged = (v: undefined | null) => {
    const r = schema.safeParse(v);
    return r.success && r.data === v;
  };
  const [absent, none] = [unchanged(undefined), unchanged(null)];
  return (v) => (v === undefined ? absent : v === null ? none : false);
}

/**
 * The item check of a telemetry route without zod's walk, for the items a device cloud sends
 * every time: a plain object of the schema's own fields, each a value the schema passes as it is
 * (numbers within their bounds, booleans, strings of allowed length or of a format zod has
 * already accepted). Such an item is returned as it is, which is what zod's parse would return (a
 * copy with the same fields and values). Anything else (an unknown field, which zod drops; a
 * value out of bounds; a field of a type this check does not read, such as `oem_raw_data` when
 * present) gives undefined, and the caller parses with zod, which answers and words the errors
 * as always. The checks are read from the schema itself, so they follow it when it changes.
 */
export function fastItemCheck<S extends z.ZodObject>(schema: S): (raw: unknown) => z.output<S> | undefined {
  const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, s]) => ({ name, accepts: fieldCheck(s) ?? emptyOnly(s) }));
  const known = new Set(fields.map((f) => f.name));
  const def = defOf(schema) as Def & { catchall?: unknown };
  // An object-level refine lives in the object's own checks: only zod can run it.
  if (def.type !== 'object' || def.catchall !== undefined || (def.checks?.length ?? 0) > 0) throw new Error('fastItemCheck reads plain objects without refinements only');
  return (raw) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
    const item = raw as Record<string, unknown>;
    for (const k in item) if (!known.has(k)) return undefined;
    for (const f of fields) if (!f.accepts(item[f.name])) return undefined;
    return item as z.output<S>;
  };
}
