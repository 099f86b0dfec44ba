/**
 * Field definitions: each entity's fields written once (name, kind, nullability, bounds, doc and
 * role in the API), from which derive the Avro record of its topic (`avroRecord`, here), the zod
 * schemas of the HTTP API (libs/api), the types services keep (`DomainOf`) and their row mappings
 * (libs/db). Bounds are checked against what the wire types carry (`WireLimits`), so a value the
 * API accepts can always be announced.
 */
import type { AvroRecord } from './avroType.ts';

/**
 * The integers each Avro type carries: `int` is 32-bit; `long` is 64-bit, but avsc encodes it
 * from a JS number only within ±(2^53 − 2) (it refuses 2^53 − 1 as a possible precision loss).
 */
export const WireLimits = {
  int: { min: -2_147_483_648, max: 2_147_483_647 },
  long: { min: -9_007_199_254_740_990, max: 9_007_199_254_740_990 },
} as const;

/** A named set of symbols: an Avro enum, and a named zod enum (an OpenAPI component) in the API. */
export interface EnumType<S extends string = string> {
  readonly name: string;
  readonly namespace: string;
  readonly symbols: readonly S[];
}

/** A named group of fields: a nested Avro record, and a named zod object in the API. */
export interface RecordType<F extends Fields = Fields> {
  readonly name: string;
  readonly namespace: string;
  readonly fields: F;
}

interface FieldBase {
  readonly doc?: string;
  /** Null stands for unknown or absent; on the wire a union with null, default null. */
  readonly nullable?: boolean;
  /** Still accepted and answered, documented as deprecated. */
  readonly deprecated?: boolean;
  /** Part of the create input: required, or optional (absent means null, or `inputDefault`). Unset: the service sets it. */
  readonly create?: 'required' | 'optional';
  /** What an absent optional create-input field becomes (the API's default). */
  readonly inputDefault?: unknown;
  /** Part of the update input (PATCH): every such field optional. */
  readonly update?: boolean;
  /** Kept and announced, never shown by the API (tenancy, internal settings). */
  readonly hidden?: boolean;
}

export interface TextField extends FieldBase {
  readonly kind: 'text';
  readonly min?: number;
  readonly max?: number;
  readonly format?: 'email' | 'uuid';
  readonly pattern?: { readonly regex: RegExp; readonly message: string };
  /** Only these values (the API's named enum), carried as a plain string on the wire. */
  readonly oneOf?: EnumType;
}
export interface EnumField extends FieldBase {
  readonly kind: 'enum';
  readonly type: EnumType;
}
export interface IntegerField extends FieldBase {
  /** The wire type: Avro `int` or `long`; `min` and `max` must lie within `WireLimits` of it. */
  readonly kind: 'int' | 'long';
  readonly min: number;
  readonly max: number;
}
export interface BooleanField extends FieldBase {
  readonly kind: 'boolean';
  /** The Avro default, for a flag added after the first version of a record. */
  readonly wireDefault?: boolean;
}
/** A point in time: ISO-8601 text on the wire and in the API, a Date in services. */
export interface TimestampField extends FieldBase {
  readonly kind: 'timestamp';
}
export interface ArrayField extends FieldBase {
  readonly kind: 'array';
  readonly items: Field;
  readonly min?: number;
  readonly max?: number;
  /** When set, items must not repeat; the message says so. */
  readonly unique?: string;
}
export interface MapField extends FieldBase {
  readonly kind: 'map';
  readonly values: Field;
}
export interface RecordField extends FieldBase {
  readonly kind: 'record';
  readonly type: RecordType;
}

export type Field = TextField | EnumField | IntegerField | BooleanField | TimestampField | ArrayField | MapField | RecordField;
export type Fields = { readonly [name: string]: Field };

type Options<F extends Field> = Omit<F, 'kind'>;

export const text = <const O extends Options<TextField>>(o: O = {} as O): O & { readonly kind: 'text' } => ({ ...o, kind: 'text' });
export const enumOf = <const E extends EnumType, const O extends Omit<Options<EnumField>, 'type'>>(type: E, o: O = {} as O): O & { readonly kind: 'enum'; readonly type: E } => ({
  ...o,
  kind: 'enum',
  type,
});
export const int = <const O extends Options<IntegerField>>(o: O): O & { readonly kind: 'int' } => ({ ...o, kind: 'int' });
export const long = <const O extends Options<IntegerField>>(o: O): O & { readonly kind: 'long' } => ({ ...o, kind: 'long' });
export const boolean = <const O extends Options<BooleanField>>(o: O = {} as O): O & { readonly kind: 'boolean' } => ({ ...o, kind: 'boolean' });
export const timestamp = <const O extends Options<TimestampField>>(o: O = {} as O): O & { readonly kind: 'timestamp' } => ({ ...o, kind: 'timestamp' });
export const array = <const I extends Field, const O extends Omit<Options<ArrayField>, 'items'>>(items: I, o: O = {} as O): O & { readonly kind: 'array'; readonly items: I } => ({
  ...o,
  kind: 'array',
  items,
});
export const map = <const V extends Field, const O extends Omit<Options<MapField>, 'values'>>(values: V, o: O = {} as O): O & { readonly kind: 'map'; readonly values: V } => ({
  ...o,
  kind: 'map',
  values,
});
export const record = <const R extends RecordType, const O extends Omit<Options<RecordField>, 'type'>>(type: R, o: O = {} as O): O & { readonly kind: 'record'; readonly type: R } => ({
  ...o,
  kind: 'record',
  type,
});
export const enumType = <const S extends string>(name: string, namespace: string, symbols: readonly S[]): EnumType<S> => ({ name, namespace, symbols });
export const recordType = <const F extends Fields>(name: string, namespace: string, fields: F): RecordType<F> => ({ name, namespace, fields });

/** `deleted` of a state message: a removal, kept as a tombstone by read models. */
export const deletedFlag = boolean({ wireDefault: false });

// ---- Types derived from a definition -------------------------------------------------------

type Scalar<F, Time> = F extends { readonly kind: 'text'; readonly oneOf: EnumType<infer S> }
  ? S
  : F extends { readonly kind: 'text' }
    ? string
    : F extends { readonly kind: 'enum'; readonly type: EnumType<infer S> }
      ? S
      : F extends { readonly kind: 'int' | 'long' }
        ? number
        : F extends { readonly kind: 'boolean' }
          ? boolean
          : F extends { readonly kind: 'timestamp' }
            ? Time
            : F extends { readonly kind: 'array'; readonly items: infer I }
              ? ValueOf<I, Time>[]
              : F extends { readonly kind: 'map'; readonly values: infer V }
                ? Record<string, ValueOf<V, Time>>
                : F extends { readonly kind: 'record'; readonly type: RecordType<infer R> }
                  ? ValuesOf<R, Time>
                  : never;

/** The value of one field; `Time` is how a timestamp is held (text on the wire, Date in services). */
export type ValueOf<F, Time = string> = F extends { readonly nullable: true } ? Scalar<F, Time> | null : Scalar<F, Time>;
export type ValuesOf<Fs, Time = string> = { -readonly [K in keyof Fs]: ValueOf<Fs[K], Time> };
/** An entity as messages and the API carry it: timestamps as ISO-8601 text. */
export type WireOf<Fs> = ValuesOf<Fs, string>;
/** An entity as a service keeps it: timestamps as Date. */
export type DomainOf<Fs> = ValuesOf<Fs, Date>;

type KeysWhere<Fs, C> = { [K in keyof Fs]: Fs[K] extends C ? K : never }[keyof Fs];
/** Fields the API shows (all but hidden ones). */
export type VisibleKeys<Fs> = Exclude<keyof Fs, KeysWhere<Fs, { readonly hidden: true }>>;
export type CreateKeys<Fs> = KeysWhere<Fs, { readonly create: 'required' | 'optional' }>;
export type RequiredCreateKeys<Fs> = KeysWhere<Fs, { readonly create: 'required' }>;
export type UpdateKeys<Fs> = KeysWhere<Fs, { readonly update: true }>;

// ---- Selecting fields -----------------------------------------------------------------------

export function pick<const Fs extends Fields, const K extends keyof Fs & string>(fields: Fs, keys: readonly K[]): Pick<Fs, K> {
  return Object.fromEntries(keys.map((k) => [k, fields[k]])) as Pick<Fs, K>;
}

export function omit<const Fs extends Fields, const K extends keyof Fs & string>(fields: Fs, keys: readonly K[]): Omit<Fs, K> {
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !(keys as readonly string[]).includes(k))) as Omit<Fs, K>;
}

const keysWhere = (fields: Fields, test: (f: Field) => boolean): string[] => Object.keys(fields).filter((k) => test(fields[k]!));
export const visibleKeys = <Fs extends Fields>(fields: Fs) => keysWhere(fields, (f) => f.hidden !== true) as VisibleKeys<Fs>[];
export const createKeys = <Fs extends Fields>(fields: Fs) => keysWhere(fields, (f) => f.create !== undefined) as CreateKeys<Fs>[];
export const updateKeys = <Fs extends Fields>(fields: Fs) => keysWhere(fields, (f) => f.update === true) as UpdateKeys<Fs>[];

/** The fields the API shows. */
export const visibleFields = <const Fs extends Fields>(fields: Fs): Pick<Fs, VisibleKeys<Fs>> => pick(fields, visibleKeys(fields) as (keyof Fs & string)[]) as Pick<Fs, VisibleKeys<Fs>>;

// ---- Converting between what services keep and what travels ---------------------------------

function convert(f: Field, v: unknown, time: (t: unknown) => unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (f.kind) {
    case 'timestamp':
      return time(v);
    case 'array':
      return (v as unknown[]).map((i) => convert(f.items, i, time));
    case 'map':
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, i]) => [k, convert(f.values, i, time)]));
    case 'record':
      return convertAll(f.type.fields, v as Record<string, unknown>, time);
    default:
      return v;
  }
}

function convertAll(fields: Fields, v: Record<string, unknown>, time: (t: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, convert(f, v[k], time)]));
}

const iso = (t: unknown) => (t instanceof Date ? t.toISOString() : new Date(t as string).toISOString());
const date = (t: unknown) => (t instanceof Date ? new Date(t.getTime()) : new Date(t as string));

/** The fields of `fields` of a kept value, as they travel (timestamps as ISO-8601 text); a copy. */
export function toWire<const Fs extends Fields>(fields: Fs, value: DomainOf<Fs>): WireOf<Fs> {
  return convertAll(fields, value as Record<string, unknown>, iso) as WireOf<Fs>;
}

/** The fields of `fields` of a travelling value, as services keep them (timestamps as Date); a copy. */
export function fromWire<const Fs extends Fields>(fields: Fs, value: WireOf<Fs>): DomainOf<Fs> {
  return convertAll(fields, value as Record<string, unknown>, date) as DomainOf<Fs>;
}

/** Input of some of the fields as services keep it; a field the input leaves out is null. */
export function fromInput<const Fs extends Fields>(fields: Fs, input: { readonly [K in keyof Fs]?: ValueOf<Fs[K]> | undefined }): DomainOf<Fs> {
  return convertAll(fields, input as Record<string, unknown>, date) as DomainOf<Fs>;
}

/**
 * Applies a partial update of some fields to a kept value: a field the patch leaves out (or gives
 * as undefined) stays; `changed` is false when every given value equals the kept one.
 */
export function applyPatch<const Fs extends Fields, T extends object>(
  fields: Fs,
  current: T & DomainOf<Fs>,
  patch: { readonly [K in keyof Fs]?: ValueOf<Fs[K]> | undefined },
): { next: T; changed: boolean } {
  const next: Record<string, unknown> = { ...current };
  let changed = false;
  for (const [k, f] of Object.entries(fields)) {
    const given = (patch as Record<string, unknown>)[k];
    if (given === undefined) continue;
    const value = convert(f, given, date);
    if (JSON.stringify(convert(f, value, iso)) === JSON.stringify(convert(f, next[k], iso))) continue;
    next[k] = value;
    changed = true;
  }
  return { next: next as T, changed };
}

// ---- The Avro record ------------------------------------------------------------------------

function avroTypeOf(f: Field, named: Set<string>): unknown {
  const once = (t: EnumType | RecordType, full: () => object) => {
    const name = `${t.namespace}.${t.name}`;
    if (named.has(name)) return name;
    named.add(name);
    return full();
  };
  switch (f.kind) {
    case 'text':
    case 'timestamp':
      return 'string';
    case 'enum':
      return once(f.type, () => ({ type: 'enum', name: f.type.name, namespace: f.type.namespace, symbols: [...f.type.symbols] }));
    case 'int':
    case 'long':
      return f.kind;
    case 'boolean':
      return 'boolean';
    case 'array':
      return { type: 'array', items: avroTypeOf(f.items, named) };
    case 'map':
      return { type: 'map', values: avroTypeOf(f.values, named) };
    case 'record':
      return once(f.type, () => avroRecordOf(f.type, named));
  }
}

function avroRecordOf(r: RecordType, named: Set<string>): object {
  const fields = Object.entries(r.fields).map(([name, f]) => {
    const type = avroTypeOf(f, named);
    const wireDefault = f.nullable ? { default: null } : f.kind === 'boolean' && f.wireDefault !== undefined ? { default: f.wireDefault } : {};
    return { name, type: f.nullable ? ['null', type] : type, ...wireDefault, ...(f.doc ? { doc: f.doc } : {}) };
  });
  return { type: 'record', name: r.name, namespace: r.namespace, fields };
}

/** The Avro record of a definition (field order as written); its value type is `WireOf` the fields. */
export function avroRecord<const F extends Fields>(r: RecordType<F>): AvroRecord<WireOf<F>> {
  return avroRecordOf(r, new Set()) as AvroRecord<WireOf<F>>;
}
