import type { z } from 'zod';
import type { ErrorCode } from '@efs/errors';
import type { RequestTarget } from './envelopes.ts';

/**
 * What one operation of a service takes and answers: the zod schemas of its path parameters,
 * query and body (the service parses every request with them), of its reply, and the error
 * codes it may answer besides VALIDATION_ERROR for input its schemas refuse.
 */
export interface OperationSpec {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response: z.ZodType;
  errors: readonly ErrorCode[];
}

/** An operation of a catalogue: its spec, the service that answers it and its name on the wire. */
export type OperationDef<T extends RequestTarget = RequestTarget, N extends string = string, S extends OperationSpec = OperationSpec> = S & {
  readonly target: T;
  readonly name: N;
};

/** A service's operations by name. */
export type OperationCatalogue = Readonly<Record<string, OperationDef>>;

/**
 * Declares the operations a service answers on its request topic. The key of each entry is the
 * operation's name on the wire (and the name of its handler file): callers reference the entry,
 * never the name, so a rename is one edit and the compiler finds every use.
 */
export function defineOperations<T extends RequestTarget, const D extends Record<string, OperationSpec>>(target: T, specs: D): { readonly [K in keyof D & string]: OperationDef<T, K, D[K]> } {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, { ...spec, target, name }])) as { [K in keyof D & string]: OperationDef<T, K, D[K]> };
}

type SchemaOf<O, K extends 'params' | 'query' | 'body'> = O extends { readonly [P in K]: infer S extends z.ZodType } ? S : undefined;
/** The parsed (output) type of an operation's params, query or body; undefined when it has none. */
export type OperationInputOf<O, K extends 'params' | 'query' | 'body'> = SchemaOf<O, K> extends z.ZodType ? z.output<SchemaOf<O, K>> : undefined;
/** What a caller passes for an operation's params, query or body (before defaults and coercion). */
export type OperationArgOf<O, K extends 'params' | 'query' | 'body'> = SchemaOf<O, K> extends z.ZodType ? z.input<SchemaOf<O, K>> : undefined;
/** What an operation answers, as its handler returns it and as a caller receives it. */
export type OperationResponse<O extends OperationSpec> = z.output<O['response']>;
export type OperationResponseIn<O extends OperationSpec> = z.input<O['response']>;
