/**
 * The load generator, in a process of its own (bench/load.ts starts it), so the load never runs
 * inside a measured process. Prints its result as one JSON line in autocannon's shape.
 *
 *   node bench/loadGenerator.ts '{"url": ..., "method": ..., "headers": {...}, "body": ..., "connections": 64, "duration": 10, "overallRate": 500}'
 *
 * As fast as answers come (no overallRate): autocannon, `connections` requests in flight.
 *
 * At a fixed rate (overallRate): not autocannon, whose rate limit measures something else. It
 * gives each connection rate/connections requests a second and lets every connection send them
 * back to back when its one-second timer fires (the timers of all connections fire together): a
 * burst of `rate` requests at `connections` in flight at the start of each second, then silence,
 * so its latencies are those of a saturated system (64 in flight) for most requests. And it
 * "corrects" each latency for coordinated omission with an expected interval of ceil(1 / rate)
 * ms, 1 ms whatever the rate, adding a synthetic sample for every millisecond a request took
 * (137,644 samples for 5,001 requests at 500 req/s), which weights each request by its latency.
 * Here instead request i is due at start + i / rate, evenly spaced, sent on up to `connections`
 * keep-alive connections, and its latency counts from when it was due: a request held back by a
 * late timer or by all connections being busy is charged for the wait (the correction wrk2 makes).
 * A starved load generator (a saturated machine) is charged too: `latencySinceSent` (from when
 * each request was written) is printed beside it, and a gap between the two says so.
 *
 * `[<id>]` in the body becomes an id unique to the request (autocannon's own idReplacement
 * declares a wrong Content-Length when the body holds the placeholder, so it is not used).
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';

interface Options {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  overallRate?: number;
}

type Autocannon = (opts: Record<string, unknown>) => Promise<unknown>;

/** How long a request of the fixed-rate load may take before it counts as a timeout (autocannon's default). */
const TIMEOUT_MS = 10_000;

const opts = JSON.parse(process.argv[2]!) as Options;
const run = randomBytes(4).toString('hex');
let n = 0;
const bodyOfNext = () => opts.body!.replaceAll('[<id>]', `${run}-${++n}`);

async function asFastAsAnswersCome(): Promise<unknown> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  return autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.duration,
    requests: [
      {
        method: opts.method,
        headers: opts.headers,
        ...(opts.body === undefined ? {} : { setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bodyOfNext() }) }),
      },
    ],
  });
}

async function atFixedRate(rate: number): Promise<unknown> {
  const url = new URL(opts.url);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const latencies: number[] = [];
  /** From when each was sent instead: what the answer took once the request was on its way. */
  const sinceSent: number[] = [];
  const statusCodeStats: Record<string, { count: number }> = {};
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  let total = 0;
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const body = opts.body === undefined ? undefined : bodyOfNext();
      const headers = body === undefined ? opts.headers : { ...opts.headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method, headers, timeout: TIMEOUT_MS }, (res) => {
        res.resume();
        res.once('end', () => {
          const status = res.statusCode ?? 0;
          total++;
          (statusCodeStats[status] ??= { count: 0 }).count++;
          if (status >= 200 && status < 300) {
            latencies.push(performance.now() - due);
            sinceSent.push(performance.now() - sent);
          } else non2xx++;
          resolve();
        });
      });
      req.once('timeout', () => {
        timeouts++;
        req.destroy(new Error('timeout'));
      });
      req.once('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const start = new Date();
  const t0 = performance.now();
  const count = Math.floor(opts.duration * rate);
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(send(due));
  }
  await Promise.all(inFlight);
  const finish = new Date();
  agent.destroy();
  const quantiles = (values: number[]) => {
    values.sort((a, b) => a - b);
    const at = (p: number) => (values.length ? values[Math.min(values.length - 1, Math.floor(p * values.length))]! : 0);
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
  };
  return { start, finish, errors, timeouts, non2xx, statusCodeStats, latency: quantiles(latencies), latencySinceSent: quantiles(sinceSent), requests: { total } };
}

const result = opts.overallRate ? await atFixedRate(opts.overallRate) : await asFastAsAnswersCome();
process.stdout.write(`${JSON.stringify(result)}\n`);
