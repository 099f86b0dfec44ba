import { describe, expect, it } from 'vitest';
import { jsonDeeperThan } from '../src/inputGuard.ts';

/** The scan as the input guard did it before strings were skipped whole: a character at a time, a backslash inside a string skipping the next. */
function deeperOneCharAtATime(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > max) return true;
    } else if (c === '}' || c === ']') depth--;
  }
  return false;
}

/** Deterministic generator (xorshift), so a failure names a text that can be replayed. */
function generator(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

describe('jsonDeeperThan', () => {
  it('finds the depth of JSON whose strings hold brackets, quotes and backslashes', () => {
    const nested = (n: number, inner: string) => '['.repeat(n) + inner + ']'.repeat(n);
    expect(jsonDeeperThan(nested(32, '1'), 32)).toBe(false);
    expect(jsonDeeperThan(nested(33, '1'), 32)).toBe(true);
    expect(jsonDeeperThan(nested(32, JSON.stringify('[[[{{{')), 32)).toBe(false);
    expect(jsonDeeperThan(nested(32, JSON.stringify('a"b\\"[')), 32)).toBe(false);
    expect(jsonDeeperThan(nested(31, JSON.stringify('\\\\') + ',[1]'), 32)).toBe(false);
    expect(jsonDeeperThan(nested(32, JSON.stringify('\\\\') + ',[1]'), 32)).toBe(true);
    expect(jsonDeeperThan(`{"a\\\\":[${JSON.stringify('x\\"]]]"')}]}`, 1)).toBe(true);
    // A string never closed hides everything after it.
    expect(jsonDeeperThan(`["${'['.repeat(40)}`, 32)).toBe(false);
    expect(jsonDeeperThan(`["\\"${'['.repeat(40)}`, 32)).toBe(false);
  });

  it('agrees with the one-character-at-a-time scan on random texts of brackets, quotes and backslashes', () => {
    const next = generator(20261123);
    const alphabet = ['"', '\\', '\\', '{', '}', '[', ']', 'a', ',', ':'];
    let deeper = 0;
    for (let t = 0; t < 20_000; t++) {
      const length = next(60);
      let text = '';
      for (let i = 0; i < length; i++) text += alphabet[next(alphabet.length)];
      const max = next(6);
      const expected = deeperOneCharAtATime(text, max);
      if (expected) deeper++;
      expect([text, max, jsonDeeperThan(text, max)]).toEqual([text, max, expected]);
    }
    // Both answers occur often enough for the agreement to mean something.
    expect(deeper).toBeGreaterThan(2_000);
    expect(deeper).toBeLessThan(18_000);
  });
});
