/**
 * Requests generated from an OpenAPI 3.1 document (fast-check arbitraries): for every operation,
 * path parameters, query parameters and a JSON body shaped by the document's schemas, with hostile
 * values mixed in at every level: NUL, unpaired surrogates, huge and negative numbers, 2^53,
 * nesting deeper than any schema, very long strings, `__proto__` / `constructor` keys and values
 * of the wrong type. New operations are picked up from the document as they are added.
 */
import fc from 'fast-check';

type Schema = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface OpenApiParameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema?: Schema;
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: Record<string, string[]>[];
}

/** One operation of a document: method, path template, its security schemes and its inputs. */
export interface Operation {
  method: string;
  path: string;
  securitySchemes: string[];
  pathParams: OpenApiParameter[];
  queryParams: OpenApiParameter[];
  bodySchema: Schema | undefined;
}

/** A generated request, ready to send. */
export interface GeneratedRequest {
  method: string;
  /** Path with its parameters filled in and percent-encoded (invalid encodings on purpose). */
  path: string;
  /** The body's text (JSON, or malformed on purpose); undefined for none. */
  body: string | undefined;
}

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      const params = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        securitySchemes: (op.security ?? []).flatMap((s) => Object.keys(s)),
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return ops;
}

/**
 * Percent-encodes text as a client would, except that an unpaired surrogate (which no valid
 * UTF-8 carries) is sent as the three bytes of its code unit: an invalid encoding the server must refuse.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
  }
  return out;
}

const deep = (levels: number): unknown => {
  let v: unknown = 'bottom';
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { nested: v };
  return v;
};

/** An object whose own, enumerable key is a name that JavaScript objects inherit. */
const withOwnKey = (key: string, value: unknown): Record<string, unknown> => {
  const o: Record<string, unknown> = {};
  Object.defineProperty(o, key, { value, enumerable: true, configurable: true, writable: true });
  return o;
};

export const HOSTILE_STRINGS = ['a\u0000b', '\u0000', 'a\ud800b', '\udc00', '\ud83d', 'x'.repeat(100_000), '', ' ', '\u202e\u0301', '../../etc/passwd', '%00', '__proto__', 'constructor', '1e999', 'null'];
export const HOSTILE_NUMBERS = [2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 31, -(2 ** 31) - 1, 2 ** 63, 1e308, -1e308, -1, -0, 0.5, 1e-300];
const INHERITED_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Any hostile value: strings, numbers, wrong types, deep nesting, inherited-name keys. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }),
  fc.constantFrom(deep(40), deep(2000)),
  fc.tuple(fc.constantFrom(...INHERITED_NAMES), fc.constantFrom<unknown>({ polluted: true }, null, 'x', 1, [])).map(([k, v]) => withOwnKey(k, v)),
);

/** Strings for path and query values: the hostile ones and a few ordinary ones. */
const hostileText: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 10 }));

export class RequestArbitraries {
  private readonly doc: OpenApiDocument;
  /** Real values of path parameters by name (a site the credential may reach, ...). */
  private readonly fixtures: Record<string, string>;

  constructor(doc: OpenApiDocument, fixtures: Record<string, string>) {
    this.doc = doc;
    this.fixtures = fixtures;
  }

  private resolve(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) {
      const name = (s.$ref as string).split('/').pop()!;
      s = this.doc.components?.schemas?.[name] ?? {};
    }
    return s;
  }

  /** A value shaped by the schema, with hostile values mixed in below it; depth bounds the recursion. */
  value(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
    const shaped = this.shaped(schema ?? {}, depth);
    return depth > 5 ? shaped : fc.oneof({ weight: 4, arbitrary: shaped }, { weight: 1, arbitrary: hostileValue });
  }

  private shaped(raw: Schema, depth: number): fc.Arbitrary<unknown> {
    const s = this.resolve(raw);
    const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (alternatives?.length) return fc.oneof(...alternatives.map((a) => this.shaped(a, depth)));
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const type = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : [];
    if (type.length > 1) return fc.oneof(...type.map((t) => this.shaped({ ...s, type: t }, depth)));
    switch (type[0]) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number': {
        const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : -1_000_000;
        const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : 1_000_000;
        const lo = Math.max(min, Number.MIN_SAFE_INTEGER);
        const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
        const inRange = type[0] === 'integer' ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }) : fc.double({ min: lo, max: hi, noNaN: true });
        // The bounds and just past them.
        return fc.oneof(inRange, fc.constantFrom(lo, hi, lo - 1, hi + 1, 0));
      }
      case 'string': {
        if (s.format === 'date-time') return fc.date({ min: new Date('1999-01-01'), max: new Date('2031-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
        if (s.format === 'date') return fc.date({ min: new Date('1999-01-01'), max: new Date('2031-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
        if (s.format === 'email') return fc.emailAddress();
        if (s.format === 'uuid') return fc.uuid();
        const maxLength = typeof s.maxLength === 'number' ? s.maxLength : 40;
        return fc.oneof(fc.string({ minLength: Number(s.minLength ?? 0), maxLength: Math.min(maxLength, 40) }), fc.constantFrom('88801', '88800', 'x'.repeat(Math.min(maxLength + 1, 10_000))));
      }
      case 'array': {
        const items = (s.items ?? {}) as Schema;
        const minLength = Number(s.minItems ?? 0);
        return fc.array(this.value(items, depth + 1), { minLength: Math.min(minLength, 3), maxLength: Math.max(Math.min(3, Number(s.maxItems ?? 3)), Math.min(minLength, 3)) });
      }
      case 'object':
      default: {
        const props = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set((s.required ?? []) as string[]);
        const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, this.value(v, depth + 1)])), { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
        // Sometimes a key the schema does not know, an inherited name among them.
        return fc
          .tuple(record, fc.option(fc.tuple(fc.constantFrom(...INHERITED_NAMES, 'unknown_field'), hostileValue), { freq: 4 }))
          .map(([o, extra]) => (extra ? Object.assign(withOwnKey(extra[0], extra[1]), o) : o));
      }
    }
  }

  private pathValue(p: OpenApiParameter): fc.Arbitrary<string> {
    const real = this.fixtures[p.name];
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(percentEncode(real ?? 'unknown-id')) },
      { weight: 2, arbitrary: hostileText.filter((t) => t !== '').map(percentEncode) },
      // Encodings no decoder accepts, and a segment longer than any route allows.
      { weight: 1, arbitrary: fc.constantFrom('%zz', '%', '%C0%80', '%ED%A0%80', 'a'.repeat(2000), '%2F..%2F') },
    );
  }

  private queryString(op: Operation): fc.Arbitrary<string> {
    const declared = op.queryParams.map((p) =>
      fc.option(
        fc.oneof(
          this.shaped(p.schema ?? {}, 3).map((v) => (Array.isArray(v) ? v : [v])),
          hostileText.map((t) => [t]),
          fc.constantFrom(['1e999'], ['-1'], ['9007199254740993'], ['a', 'b'], ['{"a":1}']),
        ).map((values) => values.map((v) => `${percentEncode(p.name)}=${percentEncode(typeof v === 'object' ? JSON.stringify(v) : String(v))}`).join('&')),
        { freq: 2 },
      ),
    );
    const extra = fc.option(
      fc.tuple(fc.constantFrom(...INHERITED_NAMES, 'unknown', 'a[b]', '%00'), hostileText).map(([k, v]) => `${k === '%00' ? k : percentEncode(k)}=${percentEncode(v)}`),
      { freq: 3 },
    );
    return fc.tuple(fc.tuple(...declared), extra).map(([parts, more]) => [...parts, more].filter((x): x is string => !!x).join('&'));
  }

  private bodyText(op: Operation): fc.Arbitrary<string | undefined> {
    if (!op.bodySchema) return op.method === 'GET' ? fc.constant(undefined) : fc.option(fc.constantFrom('{}', '{"a":1}', 'null'), { freq: 4, nil: undefined });
    return fc.oneof(
      { weight: 8, arbitrary: this.value(op.bodySchema).map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: fc.constantFrom('{"a":', '[]', 'null', '1e999999', '"\\ud800"', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}', '\u0000', '') },
    );
  }

  request(op: Operation): fc.Arbitrary<GeneratedRequest> {
    const params = op.pathParams.map((p) => this.pathValue(p).map((v) => [p.name, v] as const));
    return fc.tuple(fc.tuple(...params), this.queryString(op), this.bodyText(op)).map(([values, query, body]) => {
      let path = op.path;
      for (const [name, v] of values) path = path.replace(`{${name}}`, v);
      return { method: op.method, path: query ? `${path}?${query}` : path, body };
    });
  }
}
