/**
 * AvroCodec.conform's check of a value that travels without encoding: what encode would change
 * (a field left out that it would fill with its default) is refused and named by its path, inside
 * a union's record branch too, while a union branch without defaults is not walked.
 */
import { describe, expect, it } from 'vitest';
import type { Topic } from '@efs/contracts';
import { AvroCodec } from '@efs/messaging';

const topic = {
  name: 'conform.test',
  subject: 'conform.test-value',
  kind: 'event',
  partitions: 1,
  compacted: false,
  schema: {
    type: 'record',
    name: 'Outer',
    fields: [
      { name: 'id', type: 'string' },
      // A nullable record whose field has a default, and a nullable map of strings (no defaults).
      { name: 'inner', type: ['null', { type: 'record', name: 'Inner', fields: [{ name: 'a', type: 'string' }, { name: 'b', type: ['null', 'string'], default: null }] }], default: null },
      { name: 'tags', type: ['null', { type: 'map', values: 'string' }], default: null },
    ],
  },
} as unknown as Topic;

const refusal = (value: unknown): string => {
  try {
    new AvroCodec().conform(topic, value);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('AvroCodec.conform', () => {
  it('passes a value that reads the same after a round trip, a union branch of each kind included', () => {
    expect(refusal({ id: 'x', inner: { a: 'a', b: null }, tags: { k: 'v' } })).toBe('');
    expect(refusal({ id: 'x', inner: null, tags: null })).toBe('');
  });

  it("names a field left out inside a union's record branch by its path", () => {
    expect(refusal({ id: 'x', inner: { a: 'a' }, tags: null })).toMatch(/\(inner\.b: left out\)$/);
    expect(refusal({ id: 'x', inner: null })).toMatch(/\(tags: left out\)$/);
  });
});
