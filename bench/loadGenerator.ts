/**
 * The load generator: autocannon in a process of its own (bench/load.ts starts it), so the load
 * never runs inside a measured process. Prints autocannon's result as one JSON line.
 *
 *   node bench/loadGenerator.ts '{"url": ..., "method": ..., "headers": {...}, "body": ..., "connections": 64, "duration": 10, "overallRate": 500}'
 *
 * `[<id>]` in the body becomes an id unique to the request (autocannon's own idReplacement
 * declares a wrong Content-Length when the body holds the placeholder, so it is not used).
 */
import { randomBytes } from 'node:crypto';
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
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const opts = JSON.parse(process.argv[2]!) as Options;
const run = randomBytes(4).toString('hex');
let n = 0;
const result = await autocannon({
  url: opts.url,
  connections: opts.connections,
  duration: opts.duration,
  ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  requests: [
    {
      method: opts.method,
      headers: opts.headers,
      ...(opts.body === undefined
        ? {}
        : { setupRequest: (req: Record<string, unknown>) => ({ ...req, body: opts.body!.replaceAll('[<id>]', `${run}-${++n}`) }) }),
    },
  ],
});
process.stdout.write(`${JSON.stringify(result)}\n`);
