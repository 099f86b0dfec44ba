import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import {
  DEVICE_QUANTITY_MAX,
  DevicesTopic,
  RATE_MAX,
  WireLimits,
  allTopics,
  type Field,
  type Fields,
  type Topic,
} from '@efs/contracts';
import { CommissionRequest, DeviceCreate, DeviceCreateIn, UtilityProgramCreate, UtilityProgramUpdate, zodOf } from '../src/index.ts';

/**
 * Every accepted value can be carried: for every integer field of every event and state topic,
 * the largest (and smallest) value the API accepts encodes with the topic's Avro schema, and one
 * past it is refused by the API's schema. A new integer field without a bound fails here.
 */

type Path = string[];
type Named = Map<string, unknown>;

/** Where a path goes into an array item or a map value. */
const ITEM = '[]';
const VALUE = '{}';

function collectNamed(schema: unknown, named: Named): void {
  if (Array.isArray(schema)) return schema.forEach((s) => collectNamed(s, named));
  if (typeof schema !== 'object' || schema === null) return;
  const s = schema as { type: string; name?: string; namespace?: string; fields?: { type: unknown }[]; items?: unknown; values?: unknown };
  if ((s.type === 'record' || s.type === 'enum') && s.name) named.set(s.namespace ? `${s.namespace}.${s.name}` : s.name, s);
  s.fields?.forEach((f) => collectNamed(f.type, named));
  if (s.items) collectNamed(s.items, named);
  if (s.values) collectNamed(s.values, named);
}

const resolve = (schema: unknown, named: Named): unknown => (typeof schema === 'string' && named.has(schema) ? named.get(schema) : schema);

/** Every integer leaf of a schema: its path and Avro type. */
function integerLeaves(schema: unknown, named: Named, path: Path = []): { path: Path; type: 'int' | 'long' }[] {
  const s = resolve(schema, named);
  if (s === 'int' || s === 'long') return [{ path, type: s }];
  if (Array.isArray(s)) return s.flatMap((branch) => integerLeaves(branch, named, path));
  if (typeof s !== 'object' || s === null) return [];
  const o = s as { type: string; fields?: { name: string; type: unknown }[]; items?: unknown; values?: unknown };
  if (o.type === 'record') return o.fields!.flatMap((f) => integerLeaves(f.type, named, [...path, f.name]));
  if (o.type === 'array') return integerLeaves(o.items, named, [...path, ITEM]);
  if (o.type === 'map') return integerLeaves(o.values, named, [...path, VALUE]);
  return integerLeaves(o.type, named, path);
}

/** A valid value of a schema whose field at `path` holds `leaf` (the simplest value everywhere else). */
function valueWith(schema: unknown, named: Named, path: Path, leaf: number): unknown {
  const s = resolve(schema, named);
  if (path.length === 0 && (s === 'int' || s === 'long')) return leaf;
  if (Array.isArray(s)) {
    // A union: the branch the path goes into, else its first (null for every optional field).
    const branch = path.length > 0 ? s.find((b) => integerLeaves(b, named).length > 0 && resolve(b, named) !== 'null') : s.find((b) => b !== 'null') ?? s[0];
    return valueWith(branch ?? s[0], named, path, leaf);
  }
  switch (s) {
    case 'null':
      return null;
    case 'boolean':
      return false;
    case 'int':
    case 'long':
      return 0;
    case 'string':
      return 'x';
  }
  const o = s as { type: string; symbols?: string[]; fields?: { name: string; type: unknown }[]; items?: unknown; values?: unknown };
  switch (o.type) {
    case 'enum':
      return o.symbols![0];
    case 'record':
      return Object.fromEntries(o.fields!.map((f) => [f.name, valueWith(f.type, named, f.name === path[0] ? path.slice(1) : [], f.name === path[0] ? leaf : 0)]));
    case 'array':
      return path[0] === ITEM ? [valueWith(o.items, named, path.slice(1), leaf)] : [];
    case 'map':
      return path[0] === VALUE ? { some_key: valueWith(o.values, named, path.slice(1), leaf) } : {};
    default:
      return valueWith(o.type, named, path, leaf);
  }
}

/** The field definition at a path of the topic's definitions. */
function definitionAt(fields: Fields, path: Path): Field | undefined {
  let f: Field | undefined = fields[path[0]!];
  for (const segment of path.slice(1)) {
    if (f === undefined) return undefined;
    if (segment === ITEM) f = f.kind === 'array' ? f.items : undefined;
    else if (segment === VALUE) f = f.kind === 'map' ? f.values : undefined;
    else f = f.kind === 'record' ? f.type.fields[segment] : undefined;
  }
  return f;
}

const carried = allTopics.filter((t) => t.kind === 'state' || t.kind === 'event');

describe('every value the API accepts can be carried on its topic', () => {
  const checked: string[] = [];

  it.each(carried.map((t) => [t.name, t] as const))('%s: each integer field at its bounds', (_name, topic: Topic) => {
    const named: Named = new Map();
    collectNamed(topic.schema, named);
    const type = avro.Type.forSchema(topic.schema as avro.Schema);
    for (const { path, type: wire } of integerLeaves(topic.schema, named)) {
      const where = `${topic.name} ${path.join('.')}`;
      expect(topic.fields, `${where}: the topic has no field definitions to bound it`).toBeDefined();
      const def = definitionAt(topic.fields!, path);
      expect(def, `${where}: no field definition`).toBeDefined();
      if (def!.kind !== 'int' && def!.kind !== 'long') throw new Error(`${where}: defined as ${def!.kind}, carried as ${wire}`);
      expect(def!.kind, where).toBe(wire);
      expect(def!.min, where).toBeGreaterThanOrEqual(WireLimits[wire].min);
      expect(def!.max, where).toBeLessThanOrEqual(WireLimits[wire].max);

      const api = zodOf(def!);
      for (const edge of [def!.min, def!.max]) {
        expect(api.safeParse(edge).success, `${where}: the API accepts ${edge}`).toBe(true);
        const message = valueWith(topic.schema, named, path, edge);
        expect(type.isValid(message), `${where}: ${edge} encodes`).toBe(true);
        expect(type.fromBuffer(type.toBuffer(message))).toEqual(message);
      }
      expect(api.safeParse(def!.max + 1).success, `${where}: the API refuses ${def!.max + 1}`).toBe(false);
      expect(api.safeParse(def!.min - 1).success, `${where}: the API refuses ${def!.min - 1}`).toBe(false);
      checked.push(where);
    }
  });

  it('walked the integer fields of programs, devices and their nested records', () => {
    expect(checked).toEqual(
      expect.arrayContaining([
        'efs.catalog.programs rates.upfront_per_kwh',
        'efs.catalog.programs participation_months.[]',
        'efs.catalog.programs auto_approve_after_ms',
        'efs.commissioning.devices attributes.{}',
        'efs.commissioning.devices reserve_percentage',
      ]),
    );
  });
});

describe("the API's own schemas refuse what the wire cannot carry, naming the field", () => {
  const install_date = '2024-01-01T00:00:00Z';
  const battery = (wh: number) => ({ id: 'b1', site_id: 's1', manufacturer_name: 'A', product_name: 'P', serial_number: 'S', type: 'BATTERY', install_date, attributes: { battery_capacity_wh: wh, battery_power_input_w: 1, battery_power_output_w: 1 } });
  const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) => (r.error?.issues ?? []).map((i) => i.path.join('/'));
  const devices = avro.Type.forSchema(DevicesTopic.schema as unknown as avro.Schema);
  const deviceMessage = (attributes: Record<string, number>) => ({
    ...(valueWith(DevicesTopic.schema, new Map(), [], 0) as object),
    type: 'BATTERY',
    attributes,
  });

  it('device attributes: the largest accepted travels; 2^53 - 1 and one past the bound are refused', () => {
    const ok = DeviceCreate.parse(battery(DEVICE_QUANTITY_MAX));
    expect(devices.isValid(deviceMessage(ok.attributes))).toBe(true);
    for (const wh of [DEVICE_QUANTITY_MAX + 1, Number.MAX_SAFE_INTEGER]) {
      expect(paths(DeviceCreate.safeParse(battery(wh)))).toEqual(['attributes/battery_capacity_wh']);
      expect(paths(DeviceCreateIn.safeParse(battery(wh)))).toEqual(['attributes/battery_capacity_wh']);
      expect(paths(CommissionRequest.safeParse({ site: { id: 's1' }, devices: [battery(wh)], can_auto_enroll: false }))).toEqual(['devices/0/attributes/battery_capacity_wh']);
    }
    const ev = (v: number) => ({ site_id: 's1', type: 'EV_CHARGER', install_date, attributes: { max_charge_power_w: 1, phase_count: v } });
    expect(devices.isValid(deviceMessage(DeviceCreate.parse(ev(DEVICE_QUANTITY_MAX)).attributes))).toBe(true);
    expect(paths(DeviceCreate.safeParse(ev(Number.MAX_SAFE_INTEGER)))).toEqual(['attributes/phase_count']);
    expect(paths(DeviceCreate.safeParse(ev(-DEVICE_QUANTITY_MAX - 1)))).toEqual(['attributes/phase_count']);
  });

  it('program rates: at most RATE_MAX on create and update; 2^31 is refused', () => {
    const program = (upfront_per_kwh: number) => ({ name: 'P', eligible_device_types: ['BATTERY'], zip_codes: ['11111'], rates: { upfront_per_kwh, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 } });
    expect(UtilityProgramCreate.safeParse(program(RATE_MAX)).success).toBe(true);
    for (const rate of [RATE_MAX + 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expect(paths(UtilityProgramCreate.safeParse(program(rate)))).toEqual(['rates/upfront_per_kwh']);
      expect(paths(UtilityProgramUpdate.safeParse({ rates: { yearly_per_kw: rate } }))).toEqual(['rates/yearly_per_kw']);
    }
  });
});
