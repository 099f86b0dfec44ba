import avro from 'avsc';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Topic } from '@efs/contracts';
import { DependencyUnavailableError } from '@efs/errors';

/** Turns a topic's values into bytes and back; both transports encode with the topic's Avro schema. */
export interface Codec {
  encode(topic: Topic, value: unknown): Promise<Buffer>;
  decode(topic: Topic, bytes: Buffer): Promise<unknown>;
}

/** Plain Avro binary with the schema known from the contract (in-process transport). */
export class AvroCodec implements Codec {
  private readonly types = new Map<string, avro.Type>();

  private typeOf(topic: Topic): avro.Type {
    let t = this.types.get(topic.subject);
    if (!t) {
      t = avro.Type.forSchema(topic.schema as avro.Schema);
      this.types.set(topic.subject, t);
    }
    return t;
  }

  async encode(topic: Topic, value: unknown): Promise<Buffer> {
    return this.typeOf(topic).toBuffer(value);
  }

  async decode(topic: Topic, bytes: Buffer): Promise<unknown> {
    return toPlain(this.typeOf(topic).fromBuffer(bytes));
  }

  /**
   * Checks a value against its topic's schema without encoding it, for a message handed over as
   * it is (a request or reply in one process: one receiver, nothing stored). Throws for what
   * encode refuses, and for what Avro would change on the way: a field the schema lacks (dropped)
   * or one left out (given its default); a value that passes reads the same after a round trip
   * (but for a string holding a lone UTF-16 surrogate, which Avro's UTF-8 turns into U+FFFD; JSON
   * bodies and URL-decoded parameters never hold one).
   */
  conform(topic: Topic, value: unknown): void {
    const type = this.typeOf(topic);
    // Checked twice only when it fails: the second time to say what is wrong.
    if (!type.isValid(value, STRICT)) {
      const invalid: string[] = [];
      // Where and what kind, never the value: a request holds credentials and bodies, and this
      // message is logged.
      const errorHook = (path: string[], v: unknown, t: avro.Type) => invalid.push(`${path.join('.') || '(root)'}: ${mismatch(v, t)}`);
      type.isValid(value, { ...STRICT, errorHook });
      throw new Error(`invalid ${topic.name} value (${invalid.join('; ')})`);
    }
    const missing = leftOut(type, value);
    if (missing) throw new Error(`invalid ${topic.name} value (${missing}: left out)`);
  }
}

/** Avro's check as encode would make it, and refusing fields the schema lacks (encode drops them). */
const STRICT = { noUndeclaredFields: true } as const;

/** What is wrong with a value its type refuses, without the value itself. */
function mismatch(v: unknown, t: avro.Type): string {
  if (t instanceof avro.types.RecordType && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const extra = Object.keys(v).filter((k) => !t.fields.some((f) => f.name === k));
    if (extra.length > 0) return `fields the schema lacks: ${extra.join(', ')}`;
  }
  const kind = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'number' && !Number.isInteger(v) ? 'a fraction' : `a ${typeof v}`;
  return `${kind} where the schema wants ${t.typeName}`;
}

/**
 * The first field of a valid value that is left out (undefined) where the schema has a default,
 * by path: isValid accepts that (encode would write the default); a field without one it refuses.
 * The path is put together only for a field found, on the way back out.
 */
function leftOut(type: avro.Type, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || !hasDefaults(type)) return undefined;
  if (type instanceof avro.types.RecordType) {
    for (const f of type.fields) {
      const v = (value as Record<string, unknown>)[f.name];
      if (v === undefined) return f.name;
      const inner = within(f.name, leftOut(f.type, v));
      if (inner) return inner;
    }
  } else if (type instanceof avro.types.MapType) {
    for (const k of Object.keys(value)) {
      const inner = within(k, leftOut(type.valuesType, (value as Record<string, unknown>)[k]));
      if (inner) return inner;
    }
  } else if (type instanceof avro.types.ArrayType) {
    const items = value as unknown[];
    for (let i = 0; i < items.length; i++) {
      const inner = within(i, leftOut(type.itemsType, items[i]));
      if (inner) return inner;
    }
  } else if (type instanceof avro.types.UnwrappedUnionType) {
    // Only a branch with defaults can leave one out: the others are not checked again.
    for (const branch of type.types) if (hasDefaults(branch) && branch.isValid(value)) return leftOut(branch, value);
  }
  return undefined;
}

/** The path of a field left out below `key`, with `key` in front. */
const within = (key: string | number, inner: string | undefined): string | undefined => (inner === undefined ? undefined : `${key}.${inner}`);

/** Whether a type holds a record with a defaulted field (a map of strings needs no walk), worked out once per type. */
const withDefaults = new WeakMap<avro.Type, boolean>();

function hasDefaults(type: avro.Type): boolean {
  let known = withDefaults.get(type);
  if (known !== undefined) return known;
  // A recursive type refers back to itself while this runs.
  withDefaults.set(type, false);
  if (type instanceof avro.types.RecordType) known = type.fields.some((f) => f.defaultValue() !== undefined || hasDefaults(f.type));
  else if (type instanceof avro.types.MapType) known = hasDefaults(type.valuesType);
  else if (type instanceof avro.types.ArrayType) known = hasDefaults(type.itemsType);
  else if (type instanceof avro.types.UnwrappedUnionType) known = type.types.some(hasDefaults);
  else known = false;
  withDefaults.set(type, known);
  return known;
}

/**
 * Confluent wire format (magic byte, schema id, Avro binary) through a schema registry: schemas
 * are registered under the topic's subject; readers fetch the writer's schema by id.
 */
export class RegistryCodec implements Codec {
  private readonly registry: SchemaRegistry;
  private readonly ids = new Map<string, Promise<number>>();
  private readonly subjectPrefix: string;
  private readonly url: string;

  constructor(url: string, subjectPrefix = '') {
    this.registry = new SchemaRegistry({ host: url });
    this.subjectPrefix = subjectPrefix;
    this.url = url.replace(/\/+$/, '');
  }

  /** Registers the topic's schema (once per process) and returns its id. */
  register(topic: Topic): Promise<number> {
    const subject = this.subjectPrefix + topic.subject;
    let id = this.ids.get(subject);
    if (!id) {
      id = this.registerSubject(subject, topic.schema);
      id.catch(() => this.ids.delete(subject));
      this.ids.set(subject, id);
    }
    return id;
  }

  /**
   * Registers a schema version under a subject and asks for BACKWARD compatibility on it. Plain
   * REST rather than the client's register(): that one reads the subject's config first and
   * fails when several processes register the same subject at once (their start-up race).
   */
  private async registerSubject(subject: string, schema: unknown): Promise<number> {
    const headers = { 'content-type': 'application/vnd.schemaregistry.v1+json' };
    const r = await fetch(`${this.url}/subjects/${encodeURIComponent(subject)}/versions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ schema: JSON.stringify(schema) }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await r.json().catch(() => ({}))) as { id?: number; message?: string };
    if (!r.ok || typeof body.id !== 'number') throw new Error(`schema registry refused ${subject} (${r.status}): ${body.message ?? 'no id'}`);
    // Idempotent intent; a registry that already has the rule may answer 409, which is fine.
    await fetch(`${this.url}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    return body.id;
  }

  async encode(topic: Topic, value: unknown): Promise<Buffer> {
    return this.registry.encode(await this.register(topic), value);
  }

  /**
   * Decodes with the writer's schema, fetched by id once per process. A registry that cannot be
   * reached (stopped, restarting) throws DependencyUnavailableError: the message is fine, the
   * consumer waits for the registry rather than dead-lettering it.
   */
  async decode(_topic: Topic, bytes: Buffer): Promise<unknown> {
    try {
      return toPlain(await this.registry.decode(bytes));
    } catch (err) {
      if (registryUnreachable(err)) throw new DependencyUnavailableError(`the schema registry at ${this.url} cannot be reached`, { cause: err });
      throw err;
    }
  }
}

/**
 * The registry client's (mappersmith) answer when no response came: a ResponseError of status 400
 * whose message names the socket error (`connect ECONNREFUSED ...`); or a 5xx of a registry that
 * is starting or failing.
 */
function registryUnreachable(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'ResponseError') return false;
  const status = (err as { status?: unknown }).status;
  return (typeof status === 'number' && status >= 500) || /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ENOTFOUND|socket hang up)\b/.test(err.message);
}

/**
 * avsc decodes records into class instances; handlers get plain objects. A record is copied with
 * a spread, which keeps its fields' layout (V8 copies the instance's shape): adding them one by
 * one with computed keys turned records of more than a dozen fields into slow dictionary-mode
 * objects, and that copy plus every later read of a field was the largest cost of telemetry-ingest
 * after Kafka itself (a reading has 27 fields).
 */
function toPlain(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toPlain);
  if (Buffer.isBuffer(v)) return v;
  const out: Record<string, unknown> = { ...v };
  for (const k in out) {
    const x = out[k];
    if (x !== null && typeof x === 'object') out[k] = toPlain(x);
  }
  return out;
}
