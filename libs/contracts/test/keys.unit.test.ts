import { describe, expect, it } from 'vitest';
import { deviceKey, programGroupKey, readingKey, siteKey } from '@efs/contracts';

describe('record keys', () => {
  it('keep the keys of ids without a slash or percent sign as they always were', () => {
    expect(siteKey('acme', 'site-1')).toBe('acme/site-1');
    expect(deviceKey('acme', 'site-1', 'b1')).toBe('acme/site-1/b1');
    expect(programGroupKey('p1', 'g1')).toBe('p1/g1');
    expect(readingKey('acme', 'b1')).toBe('acme/b1');
  });

  it('give different devices different keys whatever their ids hold', () => {
    const ids = ['a', 'b', 'a/b', 'b/c', 'c', '%2F', '/', '%', 'a%2Fb'];
    const tuples = ids.flatMap((i) => ids.flatMap((s) => ids.map((d) => [i, s, d] as const)));
    const keys = new Set(tuples.map(([i, s, d]) => deviceKey(i, s, d)));
    expect(keys.size).toBe(tuples.length);
    expect(deviceKey('i', 'a', 'b/c')).not.toBe(deviceKey('i', 'a/b', 'c'));
    expect(siteKey('a/b', 'c')).not.toBe(siteKey('a', 'b/c'));
  });
});
