import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BatteryCounterItem, BatteryTelemetryItem } from '@efs/api';
import { fastItemCheck } from '../src/telemetry/itemCheck.ts';

/** Values at and around every bound the item schemas have, of every JSON type. */
const VALUES: unknown[] = [
  undefined, null, true, false, -1, -0.001, 0, 0.5, 1, 99.9, 100, 100.001, 2_678_400, 2_678_401, 1e300, Number.NaN, Infinity,
  '', 'x', 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(255), 'x'.repeat(256), 'SELF_CONSUMPTION',
  '2024-05-01T10:00:00Z', '2024-05-01T10:00:00.123+02:00', '2024-05-01', 'not a time', '2024-13-01T10:00:00Z',
  {}, { a: 1 }, [], [1],
];

const interval = () => ({
  device_id: 'dev-1', start_time: '2024-05-01T10:00:00.000Z', duration_s: 300, last_is_online: true, last_mode: 'SELF_CONSUMPTION',
  battery_last_power_charge_w: 0, battery_last_power_discharge_w: 1800, battery_last_state_of_charge_percentage: 40, home_last_power_w: 2500,
});
const counter = () => ({ device_id: 'dev-1', timestamp: '2024-05-01T10:00:00.000Z', battery_lifetime_energy_charge_wh: 10, battery_lifetime_energy_discharge_wh: 20, battery_state_of_charge_percentage: 50 });

/** A deterministic sequence (no Math.random: a failure must be reproducible). */
function* variants(base: () => Record<string, unknown>, fields: readonly string[]): Generator<unknown> {
  for (const f of [...fields, 'unknown_field']) for (const v of VALUES) yield { ...base(), [f]: v };
  let seed = 7;
  const next = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
  for (let i = 0; i < 3000; i++) {
    const item: Record<string, unknown> = base();
    for (let j = 0; j < 3; j++) item[fields[next(fields.length)]!] = VALUES[next(VALUES.length)];
    if (next(4) === 0) delete item[fields[next(fields.length)]!];
    yield item;
  }
  yield* [null, 'item', 3, [], [base()]];
}

/**
 * Asserts that whatever the quick check takes, zod accepts and returns the same; answers how many
 * of the items the quick check took.
 */
function expectAgreement(fast: (raw: unknown) => unknown, schema: z.ZodType, items: Iterable<unknown>): number {
  let taken = 0;
  for (const raw of items) {
    const quick = fast(raw);
    if (quick === undefined) continue;
    taken++;
    const parsed = schema.safeParse(raw);
    expect(parsed.success, JSON.stringify(raw)).toBe(true);
    expect(quick).toStrictEqual(parsed.data);
  }
  return taken;
}

describe.each([
  ['BATTERY', BatteryTelemetryItem, interval],
  ['BATTERY_COUNTER', BatteryCounterItem, counter],
] as const)('the %s item check without zod', (_, schema, base) => {
  const fast = fastItemCheck(schema);
  const fields = Object.keys(schema.shape);

  it('accepts only what zod accepts, and returns what zod returns', () => {
    // The usual items do take the quick way.
    expect(expectAgreement(fast, schema, variants(base, fields))).toBeGreaterThan(50);
  });

  it('leaves an item with a field zod drops, or a value out of bounds, to zod', () => {
    expect(fast(base())).toBeDefined();
    expect(fast({ ...base(), extra: 1 })).toBeUndefined();
    expect(fast({ ...base(), device_id: '' })).toBeUndefined();
    expect(fast({ ...base(), battery_lifetime_energy_charge_wh: -1, battery_last_power_charge_w: -1 })).toBeUndefined();
  });
});

it('the BATTERY check leaves a present oem_raw_data (a record, copied by zod) to zod, and takes null', () => {
  const fast = fastItemCheck(BatteryTelemetryItem);
  expect(fast({ ...interval(), oem_raw_data: { a: 1 } })).toBeUndefined();
  expect(fast({ ...interval(), oem_raw_data: null })).toStrictEqual(BatteryTelemetryItem.parse({ ...interval(), oem_raw_data: null }));
});

describe('the item check without zod, on schema shapes the telemetry items do not use (yet)', () => {
  const Shapes = z.object({
    id: z.uuid(),
    n: z.int().optional(),
    at: z.iso.datetime().optional(),
    mail: z.email().max(100).optional(),
    d: z.number().default(5),
    c: z.string().nullable().transform((v) => v ?? 'none'),
  });
  const base = () => ({ id: '2b1c1c5e-3f3a-4c1e-9c1a-6f1d2b3c4d5e', c: 'x' });

  it('leaves a built-in format, a default or a transform to zod, and agrees with it on what it takes', () => {
    const fast = fastItemCheck(Shapes);
    const values = [...VALUES, 1.5, 2, 'a@b.example', 'not an email', '2b1c1c5e-3f3a-4c1e-9c1a-6f1d2b3c4d5e'];
    const items = Object.keys(Shapes.shape).flatMap((f) => values.map((v) => ({ ...base(), [f]: v })));
    // Every field of these shapes is filled or changed by zod (d's default, c's transform): none is taken.
    expect(expectAgreement(fast, Shapes, items)).toBe(0);
    expect(fast({ ...base(), id: 'not a uuid' })).toBeUndefined();
    expect(fast({ ...base(), n: 1.5 })).toBeUndefined();
  });

  it('takes a format field when zod passes it, and refuses a refined object outright', () => {
    const Plain = z.object({ id: z.uuid(), at: z.iso.datetime() });
    const fast = fastItemCheck(Plain);
    const ok = { id: '2b1c1c5e-3f3a-4c1e-9c1a-6f1d2b3c4d5e', at: '2024-05-01T10:00:00Z' };
    expect(fast(ok)).toStrictEqual(Plain.parse(ok));
    expect(fast({ ...ok, id: 'x' })).toBeUndefined();
    expect(fast({ ...ok, at: 'yesterday' })).toBeUndefined();
    // A number of a format of its own (an integer) is zod's to check, whatever the value.
    const Int = fastItemCheck(z.object({ n: z.int() }));
    expect(Int({ n: 2 })).toBeUndefined();
    expect(Int({ n: 2.5 })).toBeUndefined();
    expect(() => fastItemCheck(Plain.refine(() => false))).toThrow(/refinements/);
  });

  it('answers a long string every time without remembering it', () => {
    const At = z.object({ at: z.iso.datetime({ precision: null }) });
    const fast = fastItemCheck(At);
    const long = `2024-05-01T10:00:00.${'1'.repeat(100_000)}Z`;
    expect(fast({ at: long })).toStrictEqual(At.safeParse({ at: long }).success ? { at: long } : undefined);
  });
});
