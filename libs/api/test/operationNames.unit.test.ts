/**
 * An operation's name is written once, as the key of its catalogue entry: routes, handler maps,
 * callers and tests reference the entry. A quoted name anywhere else would be a second spelling
 * the compiler cannot check, so this fails on the first one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '@efs/api';
import type { OperationDef } from '@efs/contracts';

const root = join(import.meta.dirname, '..', '..', '..');
const catalogueDir = join(root, 'libs', 'api', 'src', 'operations');
const skip = new Set(['node_modules', '.git', '.data', '.run', 'coverage']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (skip.has(e.name)) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === catalogueDir ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(e.name) ? [path] : [];
  });
}

const isOperation = (v: unknown): v is OperationDef => typeof v === 'object' && v !== null && 'target' in v && 'name' in v && 'response' in v;
const catalogues = Object.entries(api).filter(([name]) => name.endsWith('Operations'));
const operations = catalogues.flatMap(([, c]) => Object.values(c as Record<string, unknown>).filter(isOperation));

describe('operation names', () => {
  it('every catalogue entry is named by its key', () => {
    expect(operations.length).toBeGreaterThan(20);
    for (const [, c] of catalogues) for (const [key, op] of Object.entries(c as Record<string, OperationDef>)) expect(op.name).toBe(key);
  });

  it('no operation name appears as a string outside its catalogue', () => {
    const names = operations.map((o) => o.name);
    const quoted = new RegExp(`(['"\`])(${names.join('|')})\\1`, 'g');
    const found = sourceFiles(root).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(quoted)].map((m) => `${relative(root, file)}:${i + 1}: ${m[0]}`)),
    );
    expect(found).toEqual([]);
  });
});
