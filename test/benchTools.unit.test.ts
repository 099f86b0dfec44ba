/**
 * The benchmark's arithmetic (bench/): CPU between two /proc readings when processes come and
 * go, the profile summary's self and total times, time window and attribution, and the share
 * of the bare throughput taken pair by pair.
 */
import { describe, expect, it } from 'vitest';
import { median, pairedShares } from '../bench/pairs.ts';
import { cpuSince } from '../bench/procCpu.ts';
import { summarize, type CpuProfile } from '../bench/profileSummary.ts';

describe('cpuSince', () => {
  it('adds what live processes used, new ones from zero, and an exited child once through its reaper', () => {
    const before = { own: new Map([[1, 100], [2, 50], [3, 30]]), reaped: 1000 };
    // 2 exited after using 80 ms in all (30 more than before) and was reaped into the root's children time; 4 is new.
    const after = { own: new Map([[1, 160], [3, 30], [4, 20]]), reaped: 1080 };
    expect(cpuSince(before, after)).toBe(60 + 0 + 20 + 30);
  });

  it('a measured process that died gives no figure rather than a wrong one', () => {
    expect(cpuSince({ own: new Map([[7, 10]]), reaped: 0 }, { own: new Map(), reaped: NaN })).toBeNaN();
  });
});

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });

/**
 * root → handler (repo file) → format (a dependency) → writeString (native)
 *      → handler → handler (recursion)
 *      → (idle)
 */
function profile(): CpuProfile {
  const repo = 'file:///repo/services/x/src/handler.ts';
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 6] },
      { id: 2, callFrame: frame('handle', repo, 9), children: [3, 5] },
      { id: 3, callFrame: frame('format', 'file:///repo/node_modules/pino/lib/tools.js', 46), children: [4] },
      { id: 4, callFrame: frame('writeString') },
      { id: 5, callFrame: frame('handle', repo, 9) },
      { id: 6, callFrame: frame('(idle)') },
    ],
    startTime: 1_000_000,
    endTime: 1_010_000,
    // Samples 1 ms apart: writeString ×4, the recursive handle ×2, idle ×2, then writeString ×2 after the window.
    samples: [4, 4, 4, 4, 5, 5, 6, 6, 4, 4],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
}

describe('summarize', () => {
  const text = summarize(profile(), { from: 1_001_000, to: 1_009_000 });
  const line = (section: string, what: string) => {
    const lines = text.split('\n');
    const start = lines.findIndex((l) => l.startsWith(section));
    const end = lines.findIndex((l, i) => i > start && !l.startsWith(' '));
    return lines.slice(start + 1, end < 0 ? undefined : end).find((l) => l.includes(what));
  };

  it('keeps the samples of the window only and leaves idle time out of the percentages', () => {
    expect(text).toMatch(/busy 6 ms .* idle 2 ms/);
  });

  it('counts a native call with the package that made it, and self time per function with file:line', () => {
    expect(line('self time by package', 'pkg:pino')).toMatch(/66\.7%\s+4 ms/);
    expect(line('self time by function', 'writeString')).toMatch(/66\.7%\s+4 ms/);
    expect(line('self time by function', 'handle')).toMatch(/33\.3%\s+2 ms\s+handle \S*services\/x\/src\/handler\.ts:10$/);
  });

  it('counts a recursive function once per sample in total time', () => {
    expect(line('total time by function of this repository', 'handle')).toMatch(/100\.0%\s+6 ms/);
  });
});

describe('pairedShares', () => {
  it('divides each round by the bare run of the same round, not by another round', () => {
    const system = [{ round: 0, reqPerS: 3000 }, { round: 1, reqPerS: 2000 }];
    const bare = [{ round: 1, reqPerS: 8000 }, { round: 0, reqPerS: 10_000 }];
    expect(pairedShares(system, bare)).toEqual([30, 25]);
  });

  it('leaves out a round without its bare run, and the median takes the middle of the rest', () => {
    const shares = pairedShares([{ round: 0, reqPerS: 1 }, { round: 1, reqPerS: 4 }, { round: 2, reqPerS: 3 }, { round: 3, reqPerS: 9 }], [0, 1, 2].map((round) => ({ round, reqPerS: 10 })));
    expect(shares).toEqual([10, 40, 30]);
    expect(median(shares)).toBe(30);
    expect(median([10, 40])).toBe(25);
    expect(median([])).toBeNaN();
  });
});
