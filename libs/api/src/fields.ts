import { z } from 'zod';
import {
  createKeys,
  updateKeys,
  visibleKeys,
  type CreateKeys,
  type EnumType,
  type Field,
  type Fields,
  type RecordType,
  type UpdateKeys,
  type ValueOf,
  type VisibleKeys,
} from '@efs/contracts';

/**
 * zod schemas derived from the field definitions of libs/contracts: what the API accepts (every
 * bound of the definition, so that whatever it accepts the wire carries) and what it answers.
 */

/** `input`: every bound (what the API accepts); `record`: type and format only (what it answers). */
export type Mode = 'input' | 'record';

export type ZodOf<F> = z.ZodType<ValueOf<F>, ValueOf<F>>;
type NonNullZod<F> = z.ZodType<Exclude<ValueOf<F>, null>, Exclude<ValueOf<F>, null>>;
type Shape<Fs, K extends keyof Fs> = { -readonly [P in K]: ZodOf<Fs[P]> };
type CreateShape<Fs> = {
  -readonly [K in CreateKeys<Fs>]: Fs[K] extends { readonly create: 'required' }
    ? ZodOf<Fs[K]>
    : Fs[K] extends { readonly inputDefault: unknown }
      ? z.ZodDefault<ZodOf<Fs[K]>>
      : z.ZodOptional<ZodOf<Fs[K]>>;
};
type UpdateShape<Fs> = { -readonly [K in UpdateKeys<Fs>]: z.ZodOptional<ZodOf<Fs[K]>> };

export const DateTime = z.string().datetime({ offset: true });

// One zod schema per named type, so that each is one OpenAPI component whatever uses it.
const enums = new Map<EnumType, z.ZodType>();
const records = new Map<RecordType, z.ZodType>();

/** The named enum (OpenAPI component) of an enum type. */
export function namedEnum<const S extends string>(e: EnumType<S>): z.ZodEnum<{ [K in S]: K }> {
  let s = enums.get(e);
  if (!s) {
    s = z.enum(e.symbols as readonly [S, ...S[]]).meta({ id: e.name });
    enums.set(e, s);
  }
  return s as z.ZodEnum<{ [K in S]: K }>;
}

/** The named object (OpenAPI component) of a record type, with every bound: it is both accepted and answered. */
export function namedRecord<const F extends Fields>(r: RecordType<F>): z.ZodObject<Shape<F, keyof F>> {
  return recordSchema(r) as z.ZodObject<Shape<F, keyof F>>;
}

function recordSchema(r: RecordType): z.ZodType {
  let s = records.get(r);
  if (!s) {
    s = z.object(shapeOf(r.fields, Object.keys(r.fields), 'input')).meta({ id: r.name });
    records.set(r, s);
  }
  return s;
}

/** An address as mail systems carry it (RFC 5321 §4.5.3.1): a local part of at most 64 characters, a domain of at most 255. */
function emailParts(s: z.ZodString): z.ZodString {
  return s
    .refine((v) => v.lastIndexOf('@') <= 64, 'the part before @ must be at most 64 characters')
    .refine((v) => v.length - v.lastIndexOf('@') - 1 <= 255, 'the domain must be at most 255 characters');
}

function base(f: Field, mode: Mode): z.ZodType {
  const bounded = mode === 'input';
  switch (f.kind) {
    case 'text': {
      if (f.oneOf) return namedEnum(f.oneOf);
      // A format is kept in both modes: what was accepted in that format is answered in it.
      let s = (f.format === 'email' ? z.email() : f.format === 'uuid' ? z.uuid() : z.string()) as z.ZodString;
      if (bounded && f.min !== undefined) s = s.min(f.min);
      if (bounded && f.max !== undefined) s = s.max(f.max);
      if (bounded && f.pattern) s = s.regex(f.pattern.regex, f.pattern.message);
      if (bounded && f.format === 'email') s = emailParts(s);
      return s;
    }
    case 'enum':
      return namedEnum(f.type);
    case 'int':
    case 'long':
      return bounded ? z.number().int().min(f.min).max(f.max) : z.number().int();
    case 'boolean':
      return z.boolean();
    case 'timestamp':
      return DateTime;
    case 'array': {
      let s = z.array(schemaOf(f.items, mode));
      if (bounded && f.min !== undefined) s = s.min(f.min);
      if (bounded && f.max !== undefined) s = s.max(f.max);
      const unique = f.unique;
      if (bounded && unique !== undefined) return s.refine((a) => new Set(a).size === a.length, unique);
      return s;
    }
    case 'map':
      return z.record(z.string(), schemaOf(f.values, mode));
    case 'record':
      return recordSchema(f.type);
  }
}

function schemaOf(f: Field, mode: Mode): z.ZodType {
  let s = base(f, mode);
  if (f.nullable) s = s.nullable();
  if (f.deprecated) s = s.meta({ deprecated: true, ...(f.doc ? { description: f.doc } : {}) });
  // A named type stays a reference to its one component; a description would make a copy.
  else if (f.doc && f.kind !== 'enum' && f.kind !== 'record' && !(f.kind === 'text' && f.oneOf)) s = s.describe(f.doc);
  return s;
}

/** The zod schema of one field: nullable when the field is, with its doc and deprecation. */
export function zodOf<const F extends Field>(f: F, mode: Mode = 'input'): ZodOf<F> {
  return schemaOf(f, mode) as ZodOf<F>;
}

/** A nullable field's schema without null: where an input requires what the entity may lack. */
export function nonNull<const F extends Field>(f: F): NonNullZod<F> {
  const field: Field = f;
  return schemaOf({ ...field, nullable: false }, 'input') as unknown as NonNullZod<F>;
}

function shapeOf(fields: Fields, keys: readonly string[], mode: Mode): Record<string, z.ZodType> {
  return Object.fromEntries(keys.map((k) => [k, schemaOf(fields[k]!, mode)]));
}

/** What the API answers of an entity: every field it shows, present (null when unknown), by type. */
export function recordShape<const Fs extends Fields>(fields: Fs): Shape<Fs, VisibleKeys<Fs>> {
  return shapeOf(fields, visibleKeys(fields) as string[], 'record') as Shape<Fs, VisibleKeys<Fs>>;
}

/** An entity as it travels between services (a message): every field, hidden ones too, by type. */
export function wireShape<const Fs extends Fields>(fields: Fs): Shape<Fs, keyof Fs> {
  return shapeOf(fields, Object.keys(fields), 'record') as Shape<Fs, keyof Fs>;
}

/** The create input of an entity: required fields, optional ones (defaulted where the definition says), every bound. */
export function createShape<const Fs extends Fields>(fields: Fs): CreateShape<Fs> {
  return Object.fromEntries(
    (createKeys(fields) as string[]).map((k) => {
      const f: Field = fields[k]!;
      const s = schemaOf(f, 'input');
      if (f.create === 'required') return [k, s];
      // A fresh copy each time: a default object must not be shared between requests.
      return [k, 'inputDefault' in f ? s.default(() => structuredClone(f.inputDefault) as never) : s.optional()];
    }),
  ) as CreateShape<Fs>;
}

/** The update input (PATCH) of an entity: every changeable field, all optional, every bound. */
export function updateShape<const Fs extends Fields>(fields: Fs): UpdateShape<Fs> {
  return Object.fromEntries((updateKeys(fields) as string[]).map((k) => [k, schemaOf(fields[k]!, 'input').optional()])) as UpdateShape<Fs>;
}

