import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import AjvDraft04, { type ValidateFunction } from 'ajv-draft-04';
import AjvFormats from 'ajv-formats';
import { parse } from 'yaml';

/**
 * The OpenADR 3.1 yaml as published (`../shared/spec/openadr3/openadr3-3.1.0.yaml` beside the
 * repository; OPENADR_SPEC_PATH names another place, as .ci/run sets it for a clone made
 * elsewhere). It is read, never copied into the project.
 */
export function openAdrSpecPath(): string {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  return process.env.OPENADR_SPEC_PATH ?? resolve(root, '../shared/spec/openadr3/openadr3-3.1.0.yaml');
}

/**
 * Whether the yaml can be read. It is not part of this repository, so a checkout without it beside
 * skips the OpenADR tests with a line saying where to put it (CI included: .ci/run looks for it).
 */
export function openAdrSpecAvailable(): boolean {
  if (existsSync(openAdrSpecPath())) return true;
  console.warn(`SKIPPED OpenADR 3.1 tests: the yaml is not at ${openAdrSpecPath()}; set OPENADR_SPEC_PATH to the published openadr3-3.1.0.yaml`);
  return false;
}

type Json = Record<string, unknown>;

/** `#/components/...` refs of a schema pointed at the yaml's components, registered as `oadr`. */
function rebased(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebased);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `oadr${v}` : rebased(v)]));
}

/**
 * An outside validator of answers against the yaml: Ajv (JSON Schema draft 4, the base of
 * OpenAPI 3.0 schemas, with its boolean exclusiveMaximum; `nullable` is Ajv's own keyword) with
 * ajv-formats compiles the schemas the yaml declares, nothing of ours. `answer` fails a status the
 * operation does not declare, and a body its schema refuses.
 */
export class OpenAdrSpec {
  private readonly doc: Json;
  private readonly ajv: AjvDraft04.default;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(path = openAdrSpecPath()) {
    this.doc = parse(readFileSync(path, 'utf8')) as Json;
    // Not strict: the yaml's `example` and `discriminator` are documentation, not validation.
    // CommonJS packages: their class and function are their `default` export.
    this.ajv = new AjvDraft04.default({ strict: false, allErrors: true });
    AjvFormats.default(this.ajv);
    this.ajv.addSchema({ components: this.doc.components }, 'oadr');
  }

  /** The validator of a component schema (`problem`, `program`, ...). */
  component(name: string): ValidateFunction {
    return this.compile(`component:${name}`, { $ref: `oadr#/components/schemas/${name}` });
  }

  /** Throws unless `status` is declared for the operation (path as in the yaml, `/programs/{programID}`) and the body fits its schema. */
  answer(method: string, path: string, status: number, body: unknown): void {
    const op = ((this.doc.paths as Json)[path] as Json | undefined)?.[method.toLowerCase()] as Json | undefined;
    if (!op) throw new Error(`the yaml has no operation ${method} ${path}`);
    const responses = op.responses as Json;
    let response = (responses[String(status)] ?? responses.default) as Json | undefined;
    if (!response) throw new Error(`${method} ${path} declares no ${status} (it declares ${Object.keys(responses).join(', ')}); body ${JSON.stringify(body)}`);
    if (typeof response.$ref === 'string') response = ((this.doc.components as Json).responses as Json)[response.$ref.split('/').pop()!] as Json;
    const schema = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
    if (!schema) return;
    this.check(this.compile(`${method} ${path} ${status}`, rebased(schema) as Json), body, `${method} ${path} ${status}`);
  }

  /** Throws unless the body fits the yaml's `problem` (an answer no operation declares: 404 of an unknown path, 405). */
  problem(body: unknown): void {
    this.check(this.component('problem'), body, 'problem');
  }

  private check(validate: ValidateFunction, body: unknown, what: string): void {
    if (!validate(body)) throw new Error(`${what}: the body breaks the yaml: ${this.ajv.errorsText(validate.errors)}; body ${JSON.stringify(body)}`);
  }

  private compile(key: string, schema: Json): ValidateFunction {
    const known = this.compiled.get(key);
    if (known) return known;
    const v = this.ajv.compile(schema);
    this.compiled.set(key, v);
    return v;
  }
}
