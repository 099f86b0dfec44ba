/**
 * A commission storm: `count` concurrent `POST /v1/commission` (one new site with one battery
 * each, every request with its own Idempotency-Key), then what the system stored, read through
 * the API (`GET /v1/sites`), then every request retried with its key until it is answered.
 * bench/commissionStorm.ts runs it against the main command in a process of its own;
 * test/commissionStorm.test.ts checks its outcome in `make test`.
 */
import { randomBytes } from 'node:crypto';

export interface StormOptions {
  /** Base URL of the public API. */
  url: string;
  clientToken: string;
  count: number;
  /** A sandbox zip code (programs exist there). */
  zipCode?: string;
  /** Most attempts of one retry before giving up (each waits the answer's Retry-After). */
  maxRetries?: number;
}

export interface StormAnswer {
  siteId: string;
  key: string;
  status: number;
  body: string;
  code: string | undefined;
}

export interface StormResult {
  runId: string;
  seconds: number;
  /** First answers by status. */
  statuses: Record<string, number>;
  /** First answers by status and error code, a 503 by why (`503 SERVICE_UNAVAILABLE (shed)`). */
  codes: Record<string, number>;
  /** Sites stored after the storm, among the storm's. */
  stored: number;
  /** Requests that got no answer at all (the connection failed), with why. */
  lost: string[];
  /** Answered 200 but not stored (must be 0). */
  okNotStored: string[];
  /** Answered otherwise but stored anyway (must be 0: a refusal did nothing). */
  refusedButStored: string[];
  /** Retries with the same key and body, by their final status. */
  retryStatuses: Record<string, number>;
  /** First answered 200, retried: a different status or body (must be 0). */
  replayMismatches: string[];
  /** Retries answered 409 (a second execution or a key stuck in flight: must be 0). */
  retryConflicts: string[];
  /** Sites stored after the retries, among the storm's. */
  storedAfterRetries: number;
  retrySeconds: number;
}

const count = (into: Record<string, number>, k: string) => void (into[k] = (into[k] ?? 0) + 1);

function commission(siteId: string, zip: string) {
  return {
    site: { id: siteId, zip_code: zip },
    devices: [
      {
        id: `${siteId}-battery`,
        site_id: siteId,
        manufacturer_name: 'Acme',
        product_name: 'PowerBox',
        serial_number: siteId,
        type: 'BATTERY',
        attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
        install_date: '2026-01-01T00:00:00Z',
      },
    ],
    can_auto_enroll: false,
  };
}

async function post(opts: StormOptions, siteId: string, key: string): Promise<{ status: number; body: string; retryAfter: number; replayed: boolean }> {
  try {
    const r = await fetch(`${opts.url}/v1/commission`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.clientToken}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(commission(siteId, opts.zipCode ?? '88801')),
    });
    return { status: r.status, body: await r.text(), retryAfter: Number(r.headers.get('retry-after') ?? 1), replayed: r.headers.get('idempotent-replayed') === 'true' };
  } catch (err) {
    // A connection the client lost: the outcome is unknown, which is what the retry is for.
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { status: 0, body: `${e.message}: ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`, retryAfter: 1, replayed: false };
  }
}

/** The storm's sites the integrator has, read through the API. */
async function storedSites(opts: StormOptions, prefix: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let skip = 0; ; skip += 1000) {
    const r = await fetch(`${opts.url}/v1/sites?limit=1000&skip=${skip}`, { headers: { authorization: `Bearer ${opts.clientToken}` } });
    if (r.status === 503) {
      await new Promise((res) => setTimeout(res, 1000));
      skip -= 1000;
      continue;
    }
    if (r.status !== 200) throw new Error(`GET /v1/sites answered ${r.status}: ${await r.text()}`);
    const page = (await r.json()) as { id: string }[];
    for (const s of page) if (s.id.startsWith(prefix)) ids.add(s.id);
    if (page.length < 1000) return ids;
  }
}

const codeOf = (body: string): string | undefined => {
  try {
    return (JSON.parse(body) as { code?: string }).code;
  } catch {
    return undefined;
  }
};

export async function runStorm(opts: StormOptions): Promise<StormResult> {
  const runId = randomBytes(4).toString('hex');
  const prefix = `storm-${runId}-`;
  const started = Date.now();
  const answers: StormAnswer[] = await Promise.all(
    Array.from({ length: opts.count }, async (_, i) => {
      const siteId = `${prefix}${i}`;
      const key = `storm-key-${runId}-${i}`;
      const r = await post(opts, siteId, key);
      return { siteId, key, status: r.status, body: r.body, code: codeOf(r.body) };
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const statuses: Record<string, number> = {};
  const codes: Record<string, number> = {};
  for (const a of answers) {
    count(statuses, String(a.status));
    count(codes, `${a.status} ${a.code ?? ''}${a.body.includes('at capacity') ? ' (shed)' : a.status === 503 ? ' (no answer in time)' : ''}`.trim());
  }
  const stored = await storedSites(opts, prefix);
  const okNotStored = answers.filter((a) => a.status === 200 && !stored.has(a.siteId)).map((a) => a.siteId);
  const refusedButStored = answers.filter((a) => a.status !== 200 && a.status !== 0 && stored.has(a.siteId)).map((a) => a.siteId);

  // Every request again with its key, as a client would after any answer: at most `concurrency` at a time.
  const retryStarted = Date.now();
  const retryStatuses: Record<string, number> = {};
  const replayMismatches: string[] = [];
  const retryConflicts: string[] = [];
  const queue = [...answers];
  const worker = async () => {
    for (let a = queue.shift(); a; a = queue.shift()) {
      let r = await post(opts, a.siteId, a.key);
      for (let attempt = 1; (r.status === 503 || r.status === 429 || r.status === 0) && attempt < (opts.maxRetries ?? 60); attempt++) {
        await new Promise((res) => setTimeout(res, r.retryAfter * 1000 * (0.5 + Math.random())));
        r = await post(opts, a.siteId, a.key);
      }
      count(retryStatuses, String(r.status));
      if (r.status === 409) retryConflicts.push(`${a.siteId}: ${r.body}`);
      if (a.status === 200 && (r.status !== 200 || r.body !== a.body || !r.replayed)) replayMismatches.push(a.siteId);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  const storedAfterRetries = (await storedSites(opts, prefix)).size;
  return {
    runId,
    seconds,
    statuses,
    codes,
    stored: stored.size,
    lost: answers.filter((a) => a.status === 0).map((a) => `${a.siteId}: ${a.body}`),
    okNotStored,
    refusedButStored,
    retryStatuses,
    replayMismatches,
    retryConflicts,
    storedAfterRetries,
    retrySeconds: (Date.now() - retryStarted) / 1000,
  };
}
