/**
 * What the embedded default allocates per request: autocannon in its own process against the
 * main command (`cli/src/main.ts run`), with V8's sampling heap profiler counting every object a
 * request allocates, those the garbage collector has already taken back included (most of a
 * request's). Allocation per request decides how much the collector works (on the main thread
 * and on V8's own threads), and unlike timing it hardly moves with what else the machine runs.
 *
 *   node bench/allocations.ts [--duration 10] [--connections 64] [--routes get,post] [--top 25]
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { routesNamed, runLoad } from './load.ts';
import { Cleanup, root, startEmbedded } from './systems.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    routes: { type: 'string', default: 'get,post' },
    top: { type: 'string', default: '25' },
  },
});
const durationS = Number(values.duration);
const connections = Number(values.connections);
const top = Number(values.top);
const command = `node bench/allocations.ts --duration ${durationS} --connections ${connections} --routes ${values.routes} --top ${top}`;

const chosen = routesNamed(values.routes);

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const where = (n: HeapNode) => {
  const { functionName, url, lineNumber } = n.callFrame;
  // ES modules name a file:// URL, CommonJS ones a path: both relative to the repository (no machine paths in the output).
  const path = url.startsWith('file://') ? fileURLToPath(url) : url.startsWith('/') ? url : undefined;
  const file = path === undefined ? url : relative(root, path).replace(/^node_modules\//, 'pkg:');
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
};

/** Bytes allocated by each function itself, and by it and what it called (counted once per stack). */
function summarize(head: HeapNode) {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const walk = (n: HeapNode, above: ReadonlySet<string>): number => {
    const k = where(n);
    self.set(k, (self.get(k) ?? 0) + n.selfSize);
    const inner = new Set(above).add(k);
    let sum = n.selfSize;
    for (const c of n.children) sum += walk(c, inner);
    if (!above.has(k)) total.set(k, (total.get(k) ?? 0) + sum);
    return sum;
  };
  return { all: walk(head, new Set()), self, total };
}

const runDir = join(root, '.run', 'bench', `allocations-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(runDir, { recursive: true });
const cleanup = new Cleanup();
try {
  console.log(`Allocation per request, embedded default, ${new Date().toISOString()}, Node ${process.version}`);
  console.log(`autocannon in its own process, ${connections} connections, ${durationS} s per route after a 3 s warm-up; V8 sampling heap profiler, one sample per 4 kB on average, objects already collected included`);
  for (const route of chosen) {
    const file = join(runDir, `${route.method.toLowerCase()}.heapprofile`);
    process.env.EFS_HEAP_SAMPLING_FILE = file;
    const routeDir = join(runDir, route.method.toLowerCase());
    mkdirSync(routeDir, { recursive: true });
    const sys = await startEmbedded(cleanup, routeDir, undefined, ['--import', './bench/heapSampling.ts']);
    await runLoad(cleanup, sys.url, route, { connections, durationS: 3 });
    process.kill(sys.pid!, 'SIGUSR2');
    const load = await runLoad(cleanup, sys.url, route, { connections, durationS });
    process.kill(sys.pid!, 'SIGUSR2');
    for (let waited = 0; !existsSync(file); waited += 100) {
      if (waited > 30_000) throw new Error(`no heap profile from the embedded system (${file})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await sys.stop();
    const { all, self, total } = summarize((JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head);
    const perReq = (bytes: number) => `${Math.round(bytes / load.answers).toLocaleString('en-US').padStart(7)} B`;
    console.log(`\n${route.name}: ${load.answers.toLocaleString('en-US')} answers (${load.non2xx} not 2xx), ${perReq(all).trim()} allocated per answer`);
    console.log('  allocated by the function itself, per answer:');
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${perReq(v)}  ${k}`);
    console.log("  allocated by the repository's functions and what they call, per answer:");
    const ours = [...total].filter(([k]) => /^\S+ (libs|services|cli)\//.test(k));
    for (const [k, v] of ours.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${perReq(v)}  ${k}`);
  }
  console.log(`\nprofiles: ${relative(root, runDir)}\ncommand: ${command}`);
} finally {
  await cleanup.runAll();
}
