/**
 * Top costs of a V8 CPU profile (`node --cpu-prof`): self time and total time (self plus
 * callees) per package or file and per function, with file:line. Optionally only the samples in a time window (CLOCK_MONOTONIC microseconds, the clock of
 * `process.hrtime` and of the profile's `startTime`), so start-up does not hide the load.
 *
 *   node bench/profileSummary.ts FILE.cpuprofile [--top 20] [--from µs] [--to µs]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SummaryOptions {
  top?: number;
  /** Only samples taken at or after this CLOCK_MONOTONIC time, µs. */
  from?: number;
  /** Only samples taken before this time, µs. */
  to?: number;
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Where a frame is, short: a repository path, `pkg:<name>/<file>` for a dependency, `node:…` for Node's own. */
function location(f: CallFrame): string {
  if (!f.url) return '';
  let path = f.url;
  if (path.startsWith('file://')) path = fileURLToPath(path);
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) path = `pkg:${path.slice(nm + '/node_modules/'.length)}`;
  else if (path.startsWith('/')) path = relative(repoRoot, path);
  return `${path}:${f.lineNumber + 1}`;
}

/** The package (for a dependency), the Node subsystem, or the repository file a frame belongs to. */
function owner(f: CallFrame): string {
  if (!f.url) return f.functionName; // (program), (garbage collector), native
  if (f.url.startsWith('wasm://')) return 'wasm (PGlite\'s Postgres)';
  const loc = location(f);
  if (loc.startsWith('pkg:')) {
    const parts = loc.slice(4).split('/');
    return `pkg:${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  if (loc.startsWith('node:')) return loc.split(':').slice(0, 2).join(':').split('/').slice(0, 2).join('/');
  return loc.slice(0, loc.lastIndexOf(':'));
}

const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${location(f)}`.trim();

/** Milliseconds per sample at each node, over the samples inside the window. */
function sampleTimes(p: CpuProfile, opts: SummaryOptions): { perNode: Map<number, number>; windowMs: number } {
  const perNode = new Map<number, number>();
  let t = p.startTime;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if ((opts.from !== undefined && t < opts.from) || (opts.to !== undefined && t >= opts.to)) continue;
    // A sample stands for the interval up to the next one.
    const next = p.timeDeltas[i + 1] ?? 0;
    const id = p.samples[i]!;
    perNode.set(id, (perNode.get(id) ?? 0) + next / 1000);
    first = Math.min(first, t);
    last = Math.max(last, t);
  }
  return { perNode, windowMs: last > first ? (last - first) / 1000 : 0 };
}

export function summarize(p: CpuProfile, opts: SummaryOptions = {}): string {
  const top = opts.top ?? 20;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const { perNode, windowMs } = sampleTimes(p, opts);

  const add = (m: Map<string, number>, k: string, ms: number) => m.set(k, (m.get(k) ?? 0) + ms);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const ownTotal = new Map<string, number>();
  const owners = new Map<string, number>();
  const ownersTotal = new Map<string, number>();
  let all = 0;
  let idle = 0;
  for (const [id, ms] of perNode) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    all += ms;
    add(self, label(node.callFrame), ms);
    // Each function and package once per sample, however often it recurses on the stack. Self
    // time by package counts Node's internals and natives (a socket or file write, say) with the
    // package or file that called them, so a write shows as kafkajs's, pino's or Fastify's.
    const seen = new Set<string>();
    const seenOwners = new Set<string>();
    let selfOwner: string | undefined;
    let nodeOwner: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.functionName === '(root)') continue;
      if (f.url.startsWith('node:')) nodeOwner ??= owner(f);
      else if (f.url) selfOwner ??= owner(f);
      const k = label(f);
      if (!seen.has(k)) {
        seen.add(k);
        add(total, k, ms);
        if (f.url.startsWith('file:') && !f.url.includes('/node_modules/')) add(ownTotal, k, ms);
      }
      const o = f.url ? owner(f) : undefined;
      if (o && !seenOwners.has(o)) {
        seenOwners.add(o);
        add(ownersTotal, o, ms);
      }
    }
    add(owners, selfOwner ?? nodeOwner ?? owner(node.callFrame), ms);
  }
  const pct = (ms: number) => `${((100 * ms) / (all || 1)).toFixed(1).padStart(5)}%`;
  const table = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, ms]) => `  ${pct(ms)} ${ms.toFixed(0).padStart(7)} ms  ${k}`)
      .join('\n');
  return [
    `window ${windowMs.toFixed(0)} ms, busy ${all.toFixed(0)} ms (${windowMs ? ((100 * all) / windowMs).toFixed(0) : '?'}% of one core on the main thread), idle ${idle.toFixed(0)} ms; percentages of busy time`,
    `self time by package or file (Node internals and natives counted with their caller):`,
    table(owners, 15),
    `total time (self + callees) by package or file:`,
    table(ownersTotal, 25),
    `self time by function:`,
    table(self, top),
    `total time by function of this repository:`,
    table(ownTotal, top),
    `total time by function:`,
    table(total, top),
  ].join('\n');
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '20' }, from: { type: 'string' }, to: { type: 'string' } },
  });
  if (positionals.length === 0) {
    console.error('usage: node bench/profileSummary.ts FILE.cpuprofile [--top 20] [--from µs] [--to µs]');
    process.exit(2);
  }
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    console.log(`== ${file}`);
    console.log(summarize(profile, { top: Number(values.top), ...(values.from ? { from: Number(values.from) } : {}), ...(values.to ? { to: Number(values.to) } : {}) }));
  }
}
