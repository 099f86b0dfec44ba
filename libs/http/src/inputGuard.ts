import { Errors, type AppError } from '@efs/errors';

/**
 * Deepest JSON nesting a request body may have. The API's own shapes are a few levels deep; free
 * JSON (a device's deprecated `configuration`, supplement data) gets the same room. Deeper input
 * is refused before it is parsed, so no later step (parsing, validation, logging, storing) walks
 * a structure thousands of levels deep.
 */
export const MAX_JSON_DEPTH = 32;

type Location = 'body' | 'query' | 'path';

interface Finding {
  location: Location;
  path: (string | number)[];
  message: string;
}

/**
 * Whether JSON text nests deeper than `max` arrays/objects. A scan of the raw text (brackets
 * outside strings), iterative, so its cost is one pass whatever the input. A string is skipped
 * whole: its end is the next quote that is not escaped, i.e. not preceded by an odd run of
 * backslashes (the run cannot reach past the opening quote). That finds the same string ends as
 * reading the text one character at a time with each backslash skipping the next, in a third of
 * the time on a telemetry body (450 kB, mostly keys and short strings).
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let b = end - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((end - 1 - b) % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      // A string never closed: nothing after it counts (nor did it before).
      if (end === -1) return false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

export function tooDeepError(max = MAX_JSON_DEPTH): AppError {
  const msg = `JSON nested deeper than ${max} levels`;
  return Errors.VALIDATION_ERROR(`Invalid body: ${msg}`, { detail: [{ loc: ['body'], msg, type: 'too_deep' }], errors: [{ message: msg, path: '' }] });
}

/** Why a string cannot be stored or carried: Postgres text has no NUL, and a lone surrogate is no Unicode text. */
function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'must not contain an unpaired surrogate (not valid Unicode)';
  return undefined;
}

/** Every string and object key in a parsed value that is not storable text, by path (iterative walk). */
function findBadText(value: unknown, location: Location, out: Finding[]): void {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0 && out.length < 20) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) out.push({ location, path, message: problem });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!;
        const problem = textProblem(k);
        if (problem) out.push({ location, path: [...path, printable(k)], message: `key ${problem}` });
        else stack.push({ v: x, path: [...path, k] });
      }
    }
  }
}

/** Whether a parsed value holds any string or key that is not storable text: the walk of findBadText without the paths (most requests have none). */
function hasBadText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (textProblem(v)) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (textProblem(k)) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/**
 * Whether JSON text can hold a string or key that badTextError refuses: only through a `\u`
 * escape, since a raw control character inside a string is invalid JSON and bytes that are not
 * UTF-8 decode to U+FFFD. A superset (an escaped backslash before a `u` counts too): text without
 * one needs no walk of what it parses to.
 */
export function jsonMayHoldBadText(text: string): boolean {
  return text.includes('\\u');
}

/** A key that is itself bad text, made printable so the answer that names it is valid JSON text. */
const printable = (k: string) => k.replaceAll('\u0000', '\\u0000').toWellFormed();

/**
 * The input layer's one check of every string a request brings (path segments, query values,
 * body strings and keys): NUL and unpaired surrogates answer 400 naming each field, whatever the
 * route, before any route's own validation or handler sees them.
 */
export function badTextError(parts: { params?: unknown; query?: unknown; body?: unknown }): AppError | undefined {
  if (!hasBadText(parts.params) && !hasBadText(parts.query) && !hasBadText(parts.body)) return undefined;
  const found: Finding[] = [];
  findBadText(parts.params, 'path', found);
  findBadText(parts.query, 'query', found);
  findBadText(parts.body, 'body', found);
  if (found.length === 0) return undefined;
  const detail = found.map((f) => ({ loc: [f.location, ...f.path.map(String)], msg: f.message, type: 'invalid_text' }));
  const errors = found.map((f) => ({ message: f.message, path: f.path.map(String).join('/') }));
  const first = found[0]!;
  const where = first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  return Errors.VALIDATION_ERROR(`Invalid ${first.location}: ${where}${first.message}`, { detail, errors });
}
