/**
 * TypeScript types derived from Avro schemas declared `as const`, so that a topic's schema and
 * the type its producers and consumers use can never drift apart.
 */

type Primitive = {
  null: null;
  boolean: boolean;
  int: number;
  long: number;
  float: number;
  double: number;
  string: string;
  bytes: Buffer;
};

type Field = { readonly name: string; readonly type: unknown };

type FieldsToObject<F extends readonly Field[]> = {
  -readonly [K in F[number] as K['name']]: AvroType<K['type']>;
};

/** Phantom key of a record derived from field definitions (fields.ts): it names the value type. */
declare const valueType: unique symbol;

/** An Avro record derived from field definitions; `V` is the type of its values (never set at run time). */
export interface AvroRecord<V> {
  readonly type: 'record';
  readonly name: string;
  readonly namespace: string;
  readonly fields: readonly unknown[];
  readonly [valueType]: V;
}

/** The TypeScript value type of an Avro schema. */
export type AvroType<S> = S extends AvroRecord<infer V>
  ? V
  : S extends keyof Primitive
    ? Primitive[S]
    : S extends readonly unknown[]
      ? AvroType<S[number]>
      : S extends { readonly type: 'record'; readonly fields: infer F extends readonly Field[] }
        ? FieldsToObject<F>
        : S extends { readonly type: 'enum'; readonly symbols: readonly (infer E)[] }
          ? E
          : S extends { readonly type: 'array'; readonly items: infer I }
            ? AvroType<I>[]
            : S extends { readonly type: 'map'; readonly values: infer V }
              ? Record<string, AvroType<V>>
              : S extends { readonly type: 'long'; readonly logicalType: 'timestamp-millis' }
                ? number
                : S extends { readonly type: infer P extends keyof Primitive }
                  ? Primitive[P]
                  : never;

/** An Avro schema as a plain JSON value. */
export type AvroSchema = string | readonly unknown[] | AvroRecord<any> | { readonly type: string; readonly [k: string]: unknown };
