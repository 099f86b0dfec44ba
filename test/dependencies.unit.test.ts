/**
 * Dependencies point down: the CLI may import services and libs, a service only libs, a lib only
 * other libs; no file reaches into another package by a relative path; and every workspace
 * package declares exactly the workspace and npm packages its files import (tests may use
 * devDependencies).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

interface Pkg {
  dir: string;
  name: string;
  layer: 'lib' | 'service' | 'cli';
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const packages: Pkg[] = (['libs', 'services', 'cli'] as const).flatMap((top) => {
  const dirs = top === 'cli' ? ['cli'] : readdirSync(join(root, top)).map((d) => join(top, d));
  return dirs.map((dir) => {
    const pj = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Partial<Pkg> & { name: string };
    return { dependencies: {}, devDependencies: {}, ...pj, dir, layer: top === 'libs' ? 'lib' : top === 'services' ? 'service' : 'cli' };
  });
});
const byName = new Map(packages.map((p) => [p.name, p]));
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const rootRanges: Record<string, string> = { ...rootPackage.dependencies, ...rootPackage.devDependencies };

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules') return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

const specifiers = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;
const packageOf = (spec: string) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

/** What a package's files import: bare package names (by whether a test imports them) and relative paths that leave it. */
function importsOf(pkg: Pkg) {
  const prod = new Set<string>();
  const test = new Set<string>();
  const escapes: string[] = [];
  for (const file of files(join(root, pkg.dir))) {
    const isTest = relative(join(root, pkg.dir), file).split('/').includes('test');
    for (const m of readFileSync(file, 'utf8').matchAll(specifiers)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        if (relative(join(root, pkg.dir), resolve(dirname(file), spec)).startsWith('..')) escapes.push(`${relative(root, file)}: ${spec}`);
        continue;
      }
      const name = packageOf(spec);
      if (name !== pkg.name) (isTest ? test : prod).add(name);
    }
  }
  return { prod, test, escapes };
}

describe('package dependencies', () => {
  it.each(packages.map((p) => [p.name, p] as const))('%s imports only packages below it, never by a relative path', (_name, pkg) => {
    const { prod, test, escapes } = importsOf(pkg);
    expect(escapes).toEqual([]);
    const allowed = { lib: ['lib'], service: ['lib'], cli: ['lib', 'service'] }[pkg.layer];
    const upward = [...prod, ...test].filter((n) => byName.has(n) && !allowed.includes(byName.get(n)!.layer));
    expect(upward).toEqual([]);
  });

  it.each(packages.map((p) => [p.name, p] as const))('%s declares what it imports, and nothing else', (_name, pkg) => {
    const { prod, test } = importsOf(pkg);
    expect(Object.keys(pkg.dependencies).sort()).toEqual([...prod].sort());
    expect(Object.keys(pkg.devDependencies).sort()).toEqual([...test].filter((n) => !prod.has(n)).sort());
    // One version of each npm package across the repository (the root's); workspace packages by "*".
    for (const [n, range] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) expect(range, `${pkg.name}: ${n}`).toBe(byName.has(n) ? '*' : rootRanges[n]);
  });
});
