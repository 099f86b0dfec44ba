/**
 * The request-path benchmark (`make bench`): autocannon, in its own process, against
 *   bare         a plain Fastify answering the body the real system answered (captured in this run)
 *   embedded     the main command's default mode (`node cli/src/main.ts run`: one process, PGlite)
 *   distributed  every service its own process (deploy/local/services.sh) on the shared Kafka,
 *                registry and Postgres, with a fresh database and topic prefix
 * for GET /v1/programs and POST /v1/commission (a new site with two batteries per request).
 * For each it prints req/s, p50, p99, errors, non-2xx answers and the CPU milliseconds per answer
 * of every process involved (utime + stime from /proc, from the start of the load until the
 * system is quiet again), the idle CPU of each system, and the command that produced the numbers.
 * Numbers only: it asserts nothing.
 *
 *   node bench/run.ts [--duration 10] [--connections 64] [--only bare,embedded,distributed]
 *                     [--rate 500] [--warmup 3] [--idle 5] [--profile] [--routes get,post] [--rounds 3]
 *
 * --rounds N each system's loads are run N times, each time side by side with the same load on the
 *            bare reference (running all along, measured just before or just after, the order
 *            alternating), and every ratio is taken between such a pair: the machine's speed drifts
 *            by more than a change being measured within a minute, much less within a pair.
 *            The ratio printed is the median of the rounds', each round's given too.
 * --routes   which loads to run (default both): `get` (GET /v1/programs), `post` (POST /v1/commission).
 * --rate N   a fixed overall rate, requests evenly spaced and each one's latency counted from when
 *            it was due (bench/loadGenerator.ts), instead of as fast as answers come.
 * --profile  also runs the embedded process and the distributed gateway, program-catalog,
 *            commissioning and enrollment under `node --cpu-prof` and summarises each load's
 *            window and the idle one (bench/profileSummary.ts) into .run/bench/<time>/profiles/; profiling costs
 *            CPU, so the figures of such a run are higher.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { requestPathRoutes, routesNamed, runLoad, type LoadOptions, type LoadResult, type Route } from './load.ts';
import { median, pairedShares } from './pairs.ts';
import { cpuBetween, machineBusyMs, snapshot, type CpuSource } from './procCpu.ts';
import { summarize, type CpuProfile } from './profileSummary.ts';
import { Cleanup, root, startBare, startDistributed, startEmbedded, type MeasuredSystem } from './systems.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    only: { type: 'string', default: 'bare,embedded,distributed' },
    rate: { type: 'string' },
    warmup: { type: 'string', default: '3' },
    idle: { type: 'string', default: '5' },
    profile: { type: 'boolean', default: false },
    routes: { type: 'string', default: 'get,post' },
    rounds: { type: 'string', default: '3' },
  },
});
const kinds = ['bare', 'embedded', 'distributed'] as const;
type Kind = (typeof kinds)[number];
const only = values.only.split(',').map((s) => s.trim()) as Kind[];
for (const k of only) if (!kinds.includes(k)) throw new Error(`--only: unknown system ${k} (bare, embedded, distributed)`);
const load: LoadOptions = { connections: Number(values.connections), durationS: Number(values.duration), ...(values.rate ? { rate: Number(values.rate) } : {}) };
const warmupS = Number(values.warmup);
const idleS = Number(values.idle);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a whole number from 1 (got ${values.rounds})`);
const command =
  `node bench/run.ts --duration ${load.durationS} --connections ${load.connections} --only ${only.join(',')}` +
  `${load.rate ? ` --rate ${load.rate}` : ''} --warmup ${warmupS} --idle ${idleS}${values.profile ? ' --profile' : ''}` +
  `${values.routes === 'get,post' ? '' : ` --routes ${values.routes}`}${rounds === 3 ? '' : ` --rounds ${rounds}`}`;
/** Distributed processes run under the profiler with --profile. */
const PROFILED = ['gateway', 'program-catalog', 'commissioning', 'enrollment'];

const runDir = join(root, '.run', 'bench', new Date().toISOString().replace(/[:.]/g, '-'));
const profileDir = values.profile ? join(runDir, 'profiles') : undefined;
mkdirSync(runDir, { recursive: true });

const named = routesNamed(values.routes);
// GET first, then POST, whatever order they were named in.
const measuredRoutes = [requestPathRoutes.get, requestPathRoutes.post].filter((r) => named.includes(r));

interface Row {
  system: Kind;
  route: string;
  /** Which of the --rounds; a bare row also names the system it was measured beside. */
  round: number;
  beside?: Kind;
  result: LoadResult;
  /** CPU ms per answer by process, system first, then shared infrastructure. */
  cpuPerAnswer: [string, number][];
  /**
   * What the system's Node processes would have used over the window with no requests, per
   * answer (not Kafka's or Postgres's: their idle figure is mostly other users of the machine).
   */
  idlePerAnswer: number;
  /** Time after the load until the system's processes were quiet again (their CPU is counted). */
  settleMs: number;
  /** Cores the machine had busy over the window, and how many of them others' processes used. */
  machineCores: number;
  otherCores: number;
}

interface Idle {
  system: Kind;
  /** Right after start-up (JIT and start-up work still settling), or after the loads (steady state). */
  when: 'start-up' | 'after the loads';
  /** % of one core by process over the idle window. */
  percent: [string, number][];
  nodeTotal: number;
}

const rows: Row[] = [];
const idles: Idle[] = [];
/** The time window of each load (its round's, with --rounds) and idle measurement, for the profile summaries. */
const windows: { system: Kind; route: string; round?: number; from: number; to: number }[] = [];
const cleanup = new Cleanup();
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping everything the bench started…`);
    cleanup.killRemaining();
    void cleanup.runAll().finally(() => process.exit(130));
  });
}
process.on('exit', () => cleanup.killRemaining());
// kafkajs 2.2.4 (deleting the run's topics) sets a negative timer, which Node 24 reports on every run.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'TimeoutNegativeWarning') console.warn(`${w.name}: ${w.message}`);
});

function cpuOf(sources: CpuSource[], ms: number): Promise<Map<string, number>> {
  const before = snapshot(sources);
  return sleep(ms).then(() => cpuBetween(before, snapshot(sources)));
}

/** Waits until the system's own processes use under 5% of a core (plus their idle rate), at most 20 s. */
async function settle(sys: MeasuredSystem, idleCoreShare: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    const used = [...(await cpuOf(sys.processes, 500)).values()].reduce((a, b) => a + b, 0);
    if (used <= 500 * (idleCoreShare + 0.05)) break;
  }
  return Date.now() - started;
}

/** Measures and records a system's idle CPU; returns its Node processes' share of one core. */
async function measureIdle(sys: MeasuredSystem, when: Idle['when']): Promise<number> {
  await settle(sys, 0.2);
  const from = nowUs();
  const used = await cpuOf([...sys.processes, ...sys.infrastructure], idleS * 1000);
  windows.push({ system: sys.name, route: when === 'start-up' ? 'idle' : 'idle-after', from, to: nowUs() });
  const percent = [...used].map(([n, ms]): [string, number] => [n, (100 * ms) / (idleS * 1000)]);
  const nodeTotal = sys.processes.reduce((a, p) => a + (used.get(p.name) ?? 0), 0) / (idleS * 1000);
  idles.push({ system: sys.name, when, percent, nodeTotal: 100 * nodeTotal });
  return nodeTotal;
}

async function measure(sys: MeasuredSystem, route: Route, idleNodeShare: number, round: number, beside?: Kind): Promise<void> {
  process.stderr.write(`  ${sys.name}: ${route.name}, round ${round + 1} of ${rounds} (warm-up ${warmupS} s, load ${load.durationS} s)\n`);
  await runLoad(cleanup, sys.url, route, { connections: load.connections, durationS: warmupS });
  await settle(sys, idleNodeShare);
  const sources = [...sys.processes, ...sys.infrastructure];
  const before = snapshot(sources);
  const machineBefore = machineBusyMs();
  const from = nowUs();
  const result = await runLoad(cleanup, sys.url, route, load);
  const to = nowUs();
  const settleMs = await settle(sys, idleNodeShare);
  const used = cpuBetween(before, snapshot(sources));
  const wallMs = (nowUs() - from) / 1000;
  const machine = machineBusyMs() - machineBefore;
  const ours = [...used.values()].reduce((a, b) => a + b, 0) + result.loadgenCpuMs;
  windows.push({ system: sys.name, route: route.name, round, from, to });
  const row: Row = {
    system: sys.name,
    route: route.name,
    round,
    ...(beside ? { beside } : {}),
    result,
    cpuPerAnswer: [...used].map(([n, ms]) => [n, ms / result.answers]),
    idlePerAnswer: idleNodeShare * (wallMs / result.answers),
    settleMs,
    machineCores: machine / wallMs,
    otherCores: Math.max(0, machine - ours) / wallMs,
  };
  rows.push(row);
  process.stderr.write(`    ${formatRow(row)}\n`);
}

const fmtN = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function formatRow(r: Row): string {
  const total = r.cpuPerAnswer.reduce((a, [, ms]) => a + ms, 0);
  const statuses = Object.entries(r.result.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  return [
    `${r.system}${rounds > 1 ? ` ${r.round + 1}` : ''}`.padEnd(14),
    `${fmtN(r.result.reqPerS).padStart(7)} req/s`,
    `p50 ${fmtN(r.result.p50, 1).padStart(6)} ms`,
    `p99 ${fmtN(r.result.p99, 1).padStart(7)} ms`,
    ...(r.result.sinceSent ? [`(from sending: p50 ${fmtN(r.result.sinceSent.p50, 1)}, p99 ${fmtN(r.result.sinceSent.p99, 1)})`] : []),
    `errors ${r.result.errors}`,
    `non-2xx ${r.result.non2xx}${statuses ? ` (${statuses})` : ''}`,
    `CPU ${total.toFixed(3)} ms/req${r.idlePerAnswer >= 0.0005 ? ` (idle burn ${r.idlePerAnswer.toFixed(3)} of it)` : ''}:`,
    r.cpuPerAnswer.map(([n, ms]) => `${n} ${ms.toFixed(3)}`).join(', '),
    `| load generator ${(r.result.loadgenCpuMs / r.result.answers).toFixed(3)}, settled ${(r.settleMs / 1000).toFixed(1)} s,`,
    `machine ${r.machineCores.toFixed(1)} cores busy, ${r.otherCores.toFixed(1)} by other processes`,
  ].join('  ');
}

/** The bodies the bare reference serves, taken from the real system. */
async function captureBodies(sys: MeasuredSystem): Promise<unknown> {
  const programs = await fetch(`${sys.url}/v1/programs`, { headers: requestPathRoutes.get.headers });
  if (programs.status !== 200) throw new Error(`GET /v1/programs answered ${programs.status}: ${await programs.text()}`);
  const id = `capture-${Date.now()}`;
  const commission = await fetch(`${sys.url}/v1/commission`, { method: 'POST', headers: requestPathRoutes.post.headers, body: requestPathRoutes.post.body!.replaceAll('[<id>]', id) });
  const commissionBody = (await commission.json()) as unknown;
  if (commission.status !== 200) throw new Error(`POST /v1/commission answered ${commission.status}: ${JSON.stringify(commissionBody)}`);
  return { programs: await programs.json(), commissionAnswer: { status: commission.status, body: commissionBody } };
}

function summariseProfiles(sys: MeasuredSystem): void {
  for (const [proc, file] of Object.entries(sys.profiles)) {
    if (!existsSync(file)) {
      console.error(`no profile from ${proc} (${file})`);
      continue;
    }
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    for (const w of windows.filter((x) => x.system === sys.name)) {
      const text = summarize(profile, { from: w.from, to: w.to, top: 25 });
      const round = w.round !== undefined && rounds > 1 ? `-r${w.round + 1}` : '';
      const out = join(profileDir!, `${sys.name}-${proc}-${w.route.split(' ')[0]!.toLowerCase()}${round}.txt`);
      writeFileSync(out, `${proc} during ${w.route}${round ? `, round ${w.round! + 1}` : ''} (${command})\n${text}\n`);
      process.stderr.write(`  profile summary: ${relative(root, out)}\n`);
    }
  }
}

/**
 * A system's loads, --rounds times, each beside the same load on the bare reference when it runs:
 * the system first in odd rounds, the bare first in even ones, so neither always has the warmer
 * (or the cooler) machine.
 */
async function bench(sys: MeasuredSystem, bare: MeasuredSystem | undefined): Promise<void> {
  const idleNodeShare = await measureIdle(sys, 'start-up');
  for (let round = 0; round < rounds; round++) {
    for (const route of measuredRoutes) {
      const pair = [() => measure(sys, route, idleNodeShare, round), ...(bare ? [() => measure(bare, route, 0, round, sys.name)] : [])];
      for (const run of round % 2 === 0 ? pair : pair.reverse()) await run();
    }
  }
  await measureIdle(sys, 'after the loads');
  await sys.stop();
  if (profileDir) summariseProfiles(sys);
}

/** The bare reference alone (`--only bare`): its loads, --rounds times. */
async function benchBare(bare: MeasuredSystem): Promise<void> {
  for (let round = 0; round < rounds; round++) for (const route of measuredRoutes) await measure(bare, route, 0, round);
}

const started = new Date();
try {
  let bare: MeasuredSystem | undefined;
  for (const kind of ['embedded', 'distributed'] as const) {
    if (!only.includes(kind) && !(kind === 'embedded' && only.includes('bare') && !only.includes('distributed'))) continue;
    process.stderr.write(`${kind}: starting\n`);
    const sys = kind === 'embedded' ? await startEmbedded(cleanup, runDir, profileDir) : await startDistributed(cleanup, runDir, profileDir, PROFILED);
    // The bare reference serves the bodies the first real system answered, and runs from then on.
    if (only.includes('bare') && !bare) {
      const bodies = await captureBodies(sys);
      process.stderr.write('bare: starting\n');
      bare = await startBare(cleanup, runDir, bodies);
    }
    if (only.includes(kind)) await bench(sys, bare);
    else await sys.stop();
  }
  if (bare && only.every((k) => k === 'bare')) await benchBare(bare);
  await bare?.stop();
} catch (err) {
  // Ctrl-C kills the load generator under a running load: the signal handler cleans up and exits.
  if (interrupted) await new Promise(() => undefined);
  throw err;
} finally {
  await cleanup.runAll();
}

const commit = (() => {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return `${sha}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
})();

/** A system's throughput as a share of the bare's, round by round, and their median. */
function ratioLines(ofRoute: Row[], kind: Kind): string[] {
  const measured = (rs: Row[]) => rs.map((r) => ({ round: r.round, reqPerS: r.result.reqPerS }));
  const shares = pairedShares(
    measured(ofRoute.filter((r) => r.system === kind)),
    measured(ofRoute.filter((r) => r.system === 'bare' && r.beside === kind)),
  );
  if (shares.length === 0) return [];
  const each = shares.length > 1 ? ` (median of ${shares.length} rounds, each beside its own bare run: ${shares.map((x) => `${x.toFixed(1)}%`).join(', ')})` : '';
  return [`  ${kind}: ${median(shares).toFixed(1)}% of the bare throughput${each}`];
}

const mode = load.rate ? `fixed rate ${load.rate} req/s` : 'as fast as answers come';
console.log(`\nRequest path benchmark, ${started.toISOString()}, commit ${commit}, Node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}`);
console.log(`${load.rate ? 'evenly paced requests' : 'autocannon'} in its own process, ${load.connections} connections, ${load.durationS} s per row after a ${warmupS} s warm-up, ${mode}`);
if (load.rate) console.log('p50/p99 from when each request was due (from when it was sent in parentheses: a gap means the load generator was held up)');
console.log('CPU ms/req: utime+stime from /proc per answer, from the start of the load until the system is quiet again');
console.log('(idle burn: what the system\'s Node processes use with no requests over as long, per answer);');
console.log('kafka, registry and postgres are shared with whatever else runs on the machine (postgres: every postgres process).');
for (const route of measuredRoutes) {
  console.log(`\n${route.name}${rounds > 1 ? ` (the number after a system's name is the round)` : ''}`);
  const ofRoute = rows.filter((x) => x.route === route.name);
  for (const kind of kinds) {
    if (kind === 'bare') continue;
    // Each system's rows beside the bare rows measured with them.
    for (const r of ofRoute.filter((x) => x.system === kind)) {
      console.log(`  ${formatRow(r)}`);
      const bare = ofRoute.find((x) => x.system === 'bare' && x.beside === kind && x.round === r.round);
      if (bare) console.log(`  ${formatRow(bare)}`);
    }
  }
  for (const r of ofRoute.filter((x) => x.system === 'bare' && !x.beside)) console.log(`  ${formatRow(r)}`);
  // At a fixed rate every system that keeps up answers the same req/s: the ratio says nothing.
  if (!load.rate) for (const kind of kinds) for (const line of ratioLines(ofRoute, kind)) console.log(line);
}
console.log(`\nIdle CPU (${idleS} s right after start-up, and again after the loads, % of one core)`);
for (const i of idles) console.log(`  ${i.system.padEnd(12)}  ${i.when.padEnd(15)}  Node processes ${i.nodeTotal.toFixed(1)}%: ${i.percent.map(([n, p]) => `${n} ${p.toFixed(1)}`).join(', ')}`);
writeFileSync(join(runDir, 'results.json'), JSON.stringify({ command, started, commit, rows, idles, windows }, null, 2));
console.log(`\nlogs and results.json: ${relative(root, runDir)}`);
console.log(`command: ${command}`);
