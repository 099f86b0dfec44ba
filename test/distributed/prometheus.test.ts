import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, freePort, inCi, tierAvailable, waitFor } from '@efs/testing';
import { startDistributedSystem, type DistributedSystem } from '../harness/distributed.ts';
import { MixedLoad } from '../harness/mixedLoad.ts';

// The real Prometheus server (Debian's `prometheus` package, as CI installs it) scrapes every
// process of the distributed mode through /metrics on its health port, the way the PodMonitors of
// deploy/k8s/monitoring.yaml make it scrape them in a cluster; the test asks it, through its HTTP
// query API, whether the series the alerts and the dashboard read exist and move with traffic.

const PROMETHEUS = process.env.TEST_PROMETHEUS_PATH ?? '/usr/bin/prometheus';
const haveProm = existsSync(PROMETHEUS);
if (!haveProm) {
  if (inCi()) throw new Error(`CI: ${PROMETHEUS} is missing; install Debian's prometheus package`);
  console.warn(`SKIPPED Prometheus scrape test: ${PROMETHEUS} is missing (apt-get install -y --no-install-recommends prometheus)`);
}
const run = haveProm && (await tierAvailable('kafka'));

const SCRAPE_INTERVAL_S = 1;

interface Prometheus {
  url: string;
  child: ChildProcess;
  dir: string;
  output: string[];
}

async function startPrometheus(targets: { job: string; target: string }[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'efs-prometheus-'));
  const config = {
    global: { scrape_interval: `${SCRAPE_INTERVAL_S}s`, scrape_timeout: `${SCRAPE_INTERVAL_S}s` },
    scrape_configs: [...new Set(targets.map((t) => t.job))].map((job) => ({
      job_name: job,
      static_configs: [{ targets: targets.filter((t) => t.job === job).map((t) => t.target) }],
    })),
  };
  // JSON is YAML: Prometheus reads it as its configuration file.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (b: Buffer) => void output.push(...b.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok, { timeoutMs: 60_000, what: `Prometheus ready:\n${output.join('\n')}` });
  return { url, child, dir, output };
}

async function stopPrometheus(p: Prometheus | undefined): Promise<void> {
  if (!p) return;
  if (p.child.exitCode === null) {
    const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
    p.child.kill('SIGTERM');
    await exited;
  }
  rmSync(p.dir, { recursive: true, force: true });
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

describe.runIf(run)('Prometheus scraping every process of the distributed mode', () => {
  let sys: DistributedSystem;
  let prom: Prometheus;

  /** An instant query through Prometheus's HTTP API. */
  const query = async (promql: string): Promise<VectorSample[]> => {
    const r = await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await r.json()) as { status: string; data: { resultType: string; result: VectorSample[] }; error?: string };
    expect(body.status, `${promql}: ${body.error}`).toBe('success');
    return body.data.result;
  };
  const scalar = async (promql: string): Promise<number | undefined> => {
    const result = await query(promql);
    return result.length === 0 ? undefined : Number(result[0]!.value[1]);
  };
  /** Waits until Prometheus has scraped every target once more after now. */
  const nextScrape = async () => {
    const after = Date.now() / 1000;
    await waitFor(async () => {
      const samples = await query('timestamp(up)');
      return samples.length > 0 && samples.every((s) => Number(s.value[1]) > after);
    }, { timeoutMs: 30_000, intervalMs: 250, what: 'a scrape of every target' });
  };

  beforeAll(async () => {
    // Webhooks to the load's receiver on loopback, retried soon; no rate limit in the way of the load.
    sys = await startDistributedSystem({
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_SCHEDULE: '500ms,1s,2s,2s,2s',
      WEBHOOK_POLL_MS: '1000',
      RATE_LIMIT_CLIENT: '1000000',
      RATE_LIMIT_SITE: '1000000',
      RATE_LIMIT_UTILITY: '1000000',
    });
    prom = await startPrometheus(sys.scrapeTargets());
  }, 300_000);
  afterAll(async () => {
    await stopPrometheus(prom);
    await sys?.stop();
  });

  it('finds every process up, each series labelled with its service', async () => {
    const jobs = [...new Set(sys.scrapeTargets().map((t) => t.job))].sort();
    await waitFor(async () => (await query('up == 1')).length === jobs.length, { timeoutMs: 60_000, what: `every target up:\n${prom.output.join('\n')}` });
    expect((await query('up')).map((s) => s.metric.job).sort()).toEqual(jobs);
    // Every process says which service it is, so a dashboard can group by it.
    const services = await query('count by (job, service) (nodejs_eventloop_delay_p99)');
    expect(services.map((s) => [s.metric.job, s.metric.service]).sort()).toEqual(jobs.map((j) => [j, j]));
    expect(await scalar('sum(db_client_connection_count)')).toBeGreaterThan(0);
    expect((await query('efs_log_lines_dropped_total')).map((s) => s.metric.job).sort()).toEqual(jobs);
  });

  it("counts the API's requests as they come, by route template and status class", async () => {
    const rate = 'sum(http_server_request_duration_count{job="gateway", http_route="/v1/programs", http_request_method="GET", http_response_status_class="2xx"})';
    await nextScrape();
    const before = (await scalar(rate)) ?? 0;
    for (let i = 0; i < 5; i++) expect((await sys.api.get('/v1/programs?zip_code=88801')).status).toBe(200);
    const site = apiClient(sys.urls.public, 'efs_st_not-a-token');
    expect((await site.get('/v1/programs')).status).toBe(401);
    await nextScrape();
    expect((await scalar(rate))! - before).toBe(5);
    expect(await scalar('sum(http_server_request_duration_count{job="gateway", http_response_status_class="4xx"})')).toBeGreaterThan(0);
    // The p99 the latency alert reads can be computed from the buckets.
    expect(await scalar('histogram_quantile(0.99, sum by (le) (rate(http_server_request_duration_bucket{job="gateway"}[1m])))')).toBeGreaterThan(0);
  });

  it('has every series the alerts and the dashboard read once a mixed load has run, from the processes that own them', { timeout: 300_000 }, async () => {
    const load = new MixedLoad(sys);
    try {
      await load.prepare();
      load.start();
      await load.progress(3);
      await load.stop();
      // Each series, and the jobs it must come from (a job per process; the main command is one).
      const expected: Record<string, string[]> = {
        efs_messaging_request_duration_seconds_count: ['gateway'],
        efs_messaging_records_handled_total: ['program-catalog', 'commissioning', 'enrollment', 'event-dispatch', 'telemetry-ingest', 'webhooks'],
        efs_messaging_consumer_lag: ['program-catalog', 'commissioning', 'enrollment', 'event-dispatch', 'telemetry-ingest', 'webhooks'],
        efs_messaging_consumer_lag_age_seconds: ['telemetry-ingest'],
        efs_outbox_rows_waiting: ['gateway', 'program-catalog', 'commissioning', 'enrollment', 'event-dispatch'],
        efs_outbox_oldest_age_seconds: ['commissioning'],
        efs_outbox_rows_quarantined: ['commissioning'],
        efs_webhooks_deliveries_total: ['webhooks'],
        efs_webhooks_attempts_total: ['webhooks'],
        efs_webhooks_pending: ['webhooks'],
        efs_webhooks_pending_oldest_age_seconds: ['webhooks'],
        efs_telemetry_readings_accepted_total: ['gateway'],
        efs_telemetry_readings_stored_total: ['telemetry-ingest'],
        efs_telemetry_ingest_lag_seconds_count: ['telemetry-ingest'],
        efs_dispatch_events: ['event-dispatch'],
        efs_dispatch_commands_created_total: ['event-dispatch'],
        efs_dispatch_commands_acknowledged_total: ['event-dispatch'],
        efs_dispatch_command_acknowledgement_duration_seconds_count: ['event-dispatch'],
      };
      await nextScrape();
      const missing: string[] = [];
      for (const [series, jobs] of Object.entries(expected)) {
        const seen = new Set((await query(`count by (job) (${series})`)).map((s) => s.metric.job));
        for (const job of jobs) if (!seen.has(job)) missing.push(`${series} from ${job}`);
      }
      expect(missing, load.summary()).toEqual([]);
      // And they moved with the load: commands were made and acknowledged, readings stored, webhooks delivered.
      for (const moved of ['efs_dispatch_commands_created_total', 'efs_dispatch_commands_acknowledged_total', 'efs_telemetry_readings_stored_total', 'efs_webhooks_attempts_total']) {
        expect(await scalar(`sum(${moved})`), moved).toBeGreaterThan(0);
      }
    } finally {
      await load.close();
    }
  });
});
