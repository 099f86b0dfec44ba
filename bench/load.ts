/**
 * One load run: the load generator (autocannon, or evenly paced requests at a fixed rate) in a
 * process of its own (bench/loadGenerator.ts, never inside a measured process), its JSON result
 * parsed. The load generator's own CPU is read from this process's
 * reaped-children time, as it exits.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { reapedChildrenCpuMs as childrenCpuMs } from './procCpu.ts';
import { CLIENT_TOKEN, type Cleanup } from './systems.ts';

const loadGenerator = join(import.meta.dirname, 'loadGenerator.ts');

export interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** `[<id>]` is replaced by a fresh id in every request. */
  body?: string;
}

const auth = { authorization: `Bearer ${CLIENT_TOKEN}` };
const battery = (n: number) => ({
  id: `bench-[<id>]-battery-${n}`,
  site_id: 'bench-[<id>]',
  type: 'BATTERY',
  manufacturer_name: 'Bench Energy',
  product_name: 'Bench Battery 13',
  serial_number: `SN-[<id>]-${n}`,
  install_date: '2025-04-01T00:00:00Z',
  attributes: { battery_capacity_wh: 13_500, battery_power_input_w: 5_000, battery_power_output_w: 5_000 },
});

/** The request path's two loads (`--routes get,post`): the sandbox catalog, and a new site with two batteries. */
export const requestPathRoutes: Record<'get' | 'post', Route> = {
  get: { name: 'GET /v1/programs', method: 'GET', path: '/v1/programs', headers: auth },
  post: {
    name: 'POST /v1/commission',
    method: 'POST',
    path: '/v1/commission',
    headers: { ...auth, 'content-type': 'application/json' },
    // A new site per request (autocannon puts a fresh id in place of [<id>]) in a sandbox zip code.
    body: JSON.stringify({ site: { id: 'bench-[<id>]', zip_code: '88801', state_code: 'NM' }, devices: [battery(1), battery(2)], can_auto_enroll: false }),
  },
};

/** The routes a `--routes` list names, in its order. */
export function routesNamed(list: string): Route[] {
  return list.split(',').map((r) => {
    const name = r.trim();
    if (name !== 'get' && name !== 'post') throw new Error(`--routes: unknown load ${name} (get, post)`);
    return requestPathRoutes[name];
  });
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** Fixed overall request rate, evenly spaced (bench/loadGenerator.ts); unset: as fast as answers come (autocannon). */
  rate?: number;
}

export interface LoadResult {
  /** Answers received (any status). */
  answers: number;
  reqPerS: number;
  p50: number;
  p99: number;
  /** At a fixed rate: p50 and p99 counted from when each request was sent, not from when it was due. */
  sinceSent?: { p50: number; p99: number };
  /** Connection errors and timeouts. */
  errors: number;
  non2xx: number;
  /** Status codes outside 2xx and how often. */
  statuses: Record<string, number>;
  /** CPU the load generator itself used, ms. */
  loadgenCpuMs: number;
}

interface AutocannonJson {
  start: string;
  finish: string;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats?: Record<string, { count: number }>;
  latency: { p50: number; p99: number };
  latencySinceSent?: { p50: number; p99: number };
  requests: { total: number };
}

export async function runLoad(cleanup: Cleanup, baseUrl: string, route: Route, opts: LoadOptions): Promise<LoadResult> {
  const spec = {
    url: `${baseUrl}${route.path}`,
    method: route.method,
    headers: route.headers,
    body: route.body,
    connections: opts.connections,
    duration: opts.durationS,
    overallRate: opts.rate,
  };
  const args = [loadGenerator, JSON.stringify(spec)];
  cleanup.assertOpen();
  const cpuBefore = childrenCpuMs();
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup.children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  cleanup.children.delete(child);
  if (code !== 0) throw new Error(`autocannon failed (${code}): ${err.slice(-2000)}`);
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as AutocannonJson;
  const seconds = (Date.parse(r.finish) - Date.parse(r.start)) / 1000;
  const statuses: Record<string, number> = {};
  for (const [status, s] of Object.entries(r.statusCodeStats ?? {})) if (!status.startsWith('2')) statuses[status] = s.count;
  return {
    answers: r.requests.total,
    reqPerS: r.requests.total / seconds,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ...(r.latencySinceSent ? { sinceSent: { p50: r.latencySinceSent.p50, p99: r.latencySinceSent.p99 } } : {}),
    errors: r.errors,
    non2xx: r.non2xx,
    statuses,
    loadgenCpuMs: childrenCpuMs() - cpuBefore,
  };
}
