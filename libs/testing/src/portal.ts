import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', '..');
export const PORTAL_DIR = join(root, 'portal');

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newestMtime(join(path, n))));
}

/**
 * Builds the portal UI (Vite) when portal/dist is missing or older than its sources, so that any
 * test run serves the page the sources describe (`make` does the same before running the tests).
 */
export function ensurePortalBuilt(): void {
  const built = newestMtime(join(PORTAL_DIR, 'dist', 'index.html'));
  const sources = Math.max(...['src', 'public', 'index.html', 'vite.config.ts', 'package.json'].map((p) => newestMtime(join(PORTAL_DIR, p))));
  if (built > sources) return;
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], { cwd: PORTAL_DIR, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`building the portal UI failed (exit ${r.status}); run \`npm run build -w @efs/portal\` to see why`);
}
