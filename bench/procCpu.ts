/**
 * CPU time of processes, read from /proc (Linux): utime + stime of every thread of a process,
 * in milliseconds. A benchmark snapshots its processes before and after a load and divides the
 * difference by the number of answers.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  comm: string;
  ppid: number;
  /** utime + stime of the process's own threads, ms. */
  own: number;
  /** cutime + cstime: children it has waited for, ms. */
  children: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may hold spaces: fields are counted after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  const ms = (i: number) => (Number(f[i]) * 1000) / ticksPerSecond;
  return { comm, ppid: Number(f[1]), own: ms(11) + ms(12), children: ms(13) + ms(14) };
}

/** A process or a group of processes whose CPU is measured as one figure. */
export interface CpuSource {
  name: string;
  read(): CpuReading;
}

/** CPU used so far by the live processes of a source, and by those of its children already reaped. */
export interface CpuReading {
  own: Map<number, number>;
  reaped: number;
}

/** Milliseconds of CPU a source used between two readings. */
export function cpuSince(before: CpuReading, after: CpuReading): number {
  let total = after.reaped - before.reaped;
  for (const [pid, ms] of after.own) total += ms - (before.own.get(pid) ?? 0);
  // An exited child's whole life moved into `reaped`; what it had used before is not new.
  for (const [pid, ms] of before.own) if (!after.own.has(pid)) total -= ms;
  return total;
}

/** Milliseconds of CPU one process (its threads included) has used so far; 0 once it is gone. */
export function pidCpuMs(pid: number): number {
  return readStat(pid)?.own ?? 0;
}

/** One process by pid (its threads included: libuv's pool, V8's compiler and GC threads). */
export function pidSource(name: string, pid: number): CpuSource {
  return {
    name,
    read() {
      const s = readStat(pid);
      // A measured process that died makes its figure meaningless, not zero.
      return s ? { own: new Map([[pid, s.own]]), reaped: 0 } : { own: new Map(), reaped: NaN };
    },
  };
}

/** Every process named `comm` (e.g. all Postgres backends and its background workers). */
export function commSource(name: string, comm: string): CpuSource {
  return {
    name,
    read() {
      const stats = new Map<number, Stat>();
      for (const entry of readdirSync('/proc')) {
        const pid = Number(entry);
        if (!Number.isInteger(pid)) continue;
        const s = readStat(pid);
        if (s?.comm === comm) stats.set(pid, s);
      }
      // Backends that exit between two readings are reaped by the postmaster: their CPU moves
      // into its cutime/cstime, so the group's root counts its children's time too.
      let reaped = 0;
      for (const s of stats.values()) if (!stats.has(s.ppid)) reaped += s.children;
      return { own: new Map([...stats].map(([pid, s]) => [pid, s.own])), reaped };
    },
  };
}

/** CPU time the whole machine has spent busy (every core, every process, the kernel), ms. */
export function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - f[3]! - f[4]!) * 1000) / ticksPerSecond;
}

/** CPU of this process's children that have exited and been waited for, ms. */
export function reapedChildrenCpuMs(): number {
  return readStat(process.pid)!.children;
}

function pidFromFile(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && readStat(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function pidByCommandLine(fragment: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fragment)) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/**
 * The shared infrastructure's processes: Kafka's and the registry's JVMs (pid files of
 * deploy/local, else found by command line) and every Postgres process.
 */
export function infrastructureSources(): CpuSource[] {
  const state = process.env.EFS_STATE_DIR ?? join(homedir(), '.local', 'state', 'efs');
  const sources: CpuSource[] = [];
  const kafka = pidFromFile(join(state, 'kafka', 'kafka.pid')) ?? pidByCommandLine('kafka.Kafka');
  if (kafka) sources.push(pidSource('kafka', kafka));
  const registry = pidFromFile(join(state, 'registry', 'registry.pid')) ?? pidByCommandLine('apicurio');
  if (registry) sources.push(pidSource('registry', registry));
  sources.push(commSource('postgres', 'postgres'));
  return sources;
}

/** Readings of several sources at one moment. */
export type Snapshot = Map<string, CpuReading>;

export function snapshot(sources: CpuSource[]): Snapshot {
  return new Map(sources.map((s) => [s.name, s.read()]));
}

/** CPU milliseconds each source used between two snapshots. */
export function cpuBetween(before: Snapshot, after: Snapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, a] of after) {
    const b = before.get(name);
    if (b) out.set(name, cpuSince(b, a));
  }
  return out;
}
