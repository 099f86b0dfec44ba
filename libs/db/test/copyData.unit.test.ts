import { describe, expect, it } from 'vitest';
import { CopyData, copyValue } from '../src/copy.ts';

/** COPY text of rows as lines of copyValue's strings, then their UTF-8: the bytes CopyData must give. */
function expectedBytes(rows: readonly (readonly unknown[])[]): Buffer {
  const dates = new Map<number, string>();
  return Buffer.from(rows.map((r) => r.map((v) => copyValue(v, dates)).join('\t') + '\n').join(''), 'utf8');
}

function written(rows: readonly (readonly unknown[])[]): Buffer[] {
  const out = new CopyData();
  for (const r of rows) {
    r.forEach((v, i) => (i === 0 ? out : out.tab()).value(v));
    out.end();
  }
  return out.chunks();
}

describe('CopyData', () => {
  it('writes the bytes of copyValue\'s text: escapes, NULL, booleans, numbers, dates, non-ASCII', () => {
    const rows = [
      ['plain', null, undefined, true, false, 0, -0, 7, 10, 99, 100, -1, -10, 1e15, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53, -1.5, 0.1, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, new Date(1_700_000_000_123)],
      ['tab\there', 'line\nbreak', 'cr\rhere', 'back\\slash', '\\N', 'nul\u0000char', ''],
      ['zoë', 'Ünïcødé\ttab', '日本語\n', '😀 emoji\\', 'lone \ud800 surrogate', { toString: () => 'an object' }],
    ];
    expect(Buffer.concat(written(rows)).equals(expectedBytes(rows))).toBe(true);
  });

  it('agrees with copyValue on random rows across many 64 kB chunks, no value split between chunks', () => {
    let x = 0x1234567;
    const next = (n: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    const alphabet = ['a', 'Z', '0', ' ', '\t', '\n', '\r', '\\', 'é', '€', '😀', '\u0000', 'N'];
    const value = (): unknown => {
      switch (next(7)) {
        case 0: return null;
        case 1: return next(2) === 0;
        case 2: return next(1_000_000) / (1 + next(7));
        case 4: return (next(2) === 0 ? -1 : 1) * next(10 ** (1 + next(9))) * 10 ** next(8);
        case 3: return new Date(1_700_000_000_000 + next(10) * 300_000);
        default: {
          let s = '';
          const n = next(next(40) === 0 ? 70_000 : 40);
          for (let i = 0; i < n; i++) s += alphabet[next(alphabet.length)];
          return s;
        }
      }
    };
    const rows = Array.from({ length: 3_000 }, () => Array.from({ length: 1 + next(12) }, value));
    const chunks = written(rows);
    expect(chunks.length).toBeGreaterThan(10);
    expect(Buffer.concat(chunks).equals(expectedBytes(rows))).toBe(true);
    // Each chunk is whole UTF-8 (a character is never cut in two).
    for (const c of chunks) expect(Buffer.from(c.toString('utf8'), 'utf8').equals(c)).toBe(true);
  });

  it('writes raw text and times unescaped, as copyValue\'s number and date text', () => {
    const out = new CopyData().raw('INTERVAL').tab().raw('ünescaped\t').tab().time(1_700_000_000_000).end();
    expect(Buffer.concat(out.chunks()).toString('utf8')).toBe(`INTERVAL\tünescaped\t\t${new Date(1_700_000_000_000).toISOString()}\n`);
    expect(new CopyData().chunks()).toEqual([]);
    const numbers = [0, -0, 5, -5, 10, 1_700_000_000_000, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 1.25, Number.NaN, null as unknown as number];
    const data = new CopyData();
    for (const n of numbers) data.number(n).end();
    expect(Buffer.concat(data.chunks()).toString('utf8')).toBe(numbers.map((n) => `${n}\n`).join(''));
  });
  it('fills a chunk up to the value that does not fit (room for the actual bytes, not the worst case)', () => {
    // 30,000-character values: two lines fit in a 64 kB chunk; reserving 2 or 3 bytes a character would close it after one.
    const long = (c: string) => c.repeat(30_000);
    const rows = [[long('a')], [long('b')], [long('c')], [long('d')], [`${long('e').slice(2)}\t`], [long('f')], ['ü'.repeat(15_000)], ['ß'.repeat(15_000)]];
    const out = new CopyData();
    out.raw(long('r')).end().raw('é'.repeat(15_000)).end();
    for (const [v] of rows) out.value(v).end();
    const chunks = out.chunks();
    expect(chunks.map((c) => c.length)).toEqual([60_002, 60_002, 60_002, 60_002, 60_002]);
    const dates = new Map<number, string>();
    const expected = `${long('r')}\n${'é'.repeat(15_000)}\n` + rows.map(([v]) => `${copyValue(v, dates)}\n`).join('');
    expect(Buffer.concat(chunks).toString('utf8')).toBe(expected);
  });
});
