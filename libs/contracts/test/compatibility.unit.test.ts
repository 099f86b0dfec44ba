import { describe, expect, it } from 'vitest';
import { checkAll, isBackwardCompatible } from '../src/checkCompatibility.ts';

const v1 = { type: 'record', name: 'R', fields: [{ name: 'a', type: 'string' }] };

describe('schema compatibility rule', () => {
  it('accepts adding a field with a default', () => {
    expect(isBackwardCompatible({ ...v1, fields: [...v1.fields, { name: 'b', type: ['null', 'int'], default: null }] }, v1).ok).toBe(true);
  });

  it('rejects adding a field without a default (old data cannot be read)', () => {
    const r = isBackwardCompatible({ ...v1, fields: [...v1.fields, { name: 'b', type: 'int' }] }, v1);
    expect(r.ok).toBe(false);
  });

  it('rejects changing a field type incompatibly', () => {
    expect(isBackwardCompatible({ ...v1, fields: [{ name: 'a', type: 'int' }] }, v1).ok).toBe(false);
  });

  it('finds every committed schema snapshotted and compatible', () => {
    expect(checkAll(false)).toEqual([]);
  });
});
