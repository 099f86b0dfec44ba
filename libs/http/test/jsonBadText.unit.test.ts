import { describe, expect, it } from 'vitest';
import { jsonMayHoldBadText } from '../src/inputGuard.ts';

/** What the text check refuses in a parsed value: a NUL or an unpaired surrogate in any string or key. */
function holdsBadText(v: unknown): boolean {
  const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();
  if (typeof v === 'string') return bad(v);
  if (Array.isArray(v)) return v.some(holdsBadText);
  if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => bad(k) || holdsBadText(x));
  return false;
}

/** A small seeded generator (mulberry32), so that a failure names its case. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('jsonMayHoldBadText: the walk of a parsed body is skipped only when its text cannot hold bad text', () => {
  it('is true for any \\u escape, an escaped backslash before a u included, and false for text without one', () => {
    expect(jsonMayHoldBadText('{"a":"\\u0000"}')).toBe(true);
    expect(jsonMayHoldBadText('{"a":"\\ud800"}')).toBe(true);
    expect(jsonMayHoldBadText('{"a":"\\\\u0041"}')).toBe(true);
    expect(jsonMayHoldBadText('{"a":"plain \\n \\t \\" é 😀","b":[1,2.5,null,true]}')).toBe(false);
  });

  it('never says no for a JSON text whose parsed value holds bad text (random texts of escapes, raw characters and surrogates)', () => {
    const next = random(20261127);
    const pieces = ['a', 'é', '😀', '\\u0000', '\\ud800', '\\udc00', '\\ud83d\\ude00', '\\\\u0041', '\\n', '\\"', '\\\\', '\\u0041', '\ud83d\ude00', 'u'];
    const piece = () => pieces[Math.floor(next() * pieces.length)]!;
    const str = () => `"${Array.from({ length: Math.floor(next() * 6) }, piece).join('')}"`;
    let bad = 0;
    for (let i = 0; i < 5000; i++) {
      const text = `{${str()}:[${str()},{${str()}:${str()}}]}`;
      const parsed: unknown = JSON.parse(text);
      if (holdsBadText(parsed)) {
        bad++;
        expect(jsonMayHoldBadText(text), text).toBe(true);
      }
    }
    // The generator does make bad text: the property was tested, not skipped.
    expect(bad).toBeGreaterThan(500);
  });

  it('raw bytes that are not UTF-8 decode to U+FFFD, which is not bad text: no escape, no walk needed', () => {
    const text = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}')]).toString('utf8');
    expect(holdsBadText(JSON.parse(text))).toBe(false);
    expect(jsonMayHoldBadText(text)).toBe(false);
  });
});
