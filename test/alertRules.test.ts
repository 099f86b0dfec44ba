import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { prometheusRuleOf, prometheusRulePath, rulesPath } from '../deploy/prometheus/prometheusRule.ts';

// The alerts (deploy/prometheus/rules.yml), their PrometheusRule (deploy/k8s/alerts.yaml), their
// runbook (docs/runbook.md) and the dashboard (deploy/grafana/efs-overview.json) agree, and name
// only series the services expose. promtool (Debian's `prometheus` package) checks and unit-tests
// the rules; without it outside CI those two tests skip with a line saying how to install it.

const root = join(import.meta.dirname, '..');
const rulesTestPath = join(root, 'deploy', 'prometheus', 'rules.test.yml');
const runbookPath = join(root, 'docs', 'runbook.md');
const dashboardPath = join(root, 'deploy', 'grafana', 'efs-overview.json');

/** The series of the services' /metrics (the metrics' names as @opentelemetry/exporter-prometheus writes them) and Prometheus's own `up`. */
const gauges = [
  'efs_messaging_consumer_lag',
  'efs_messaging_consumer_lag_age_seconds',
  'efs_outbox_rows_waiting',
  'efs_outbox_oldest_age_seconds',
  'efs_outbox_rows_quarantined',
  'efs_webhooks_pending',
  'efs_webhooks_pending_oldest_age_seconds',
  'efs_dispatch_events',
  'db_client_connection_count',
  'db_client_connection_pending_requests',
  'nodejs_eventloop_delay_p50',
  'nodejs_eventloop_delay_p99',
  'v8js_memory_heap_used',
  'up',
];
const counters = [
  'efs_http_requests_refused_total',
  'efs_http_idempotency_replays_total',
  'efs_messaging_requests_expired_total',
  'efs_messaging_records_handled_total',
  'efs_messaging_handler_errors_total',
  'efs_messaging_records_dead_lettered_total',
  'efs_webhooks_deliveries_total',
  'efs_webhooks_attempts_total',
  'efs_webhooks_endpoints_disabled_total',
  'efs_telemetry_readings_accepted_total',
  'efs_telemetry_readings_rejected_total',
  'efs_telemetry_readings_stored_total',
  'efs_dispatch_commands_created_total',
  'efs_dispatch_commands_acknowledged_total',
  'efs_dispatch_commands_failed_total',
  'efs_log_lines_dropped_total',
];
const histograms = [
  'http_server_request_duration',
  'efs_messaging_request_duration_seconds',
  'efs_telemetry_ingest_lag_seconds',
  'efs_dispatch_command_acknowledgement_duration_seconds',
  'v8js_gc_duration',
];
const exposedSeries = new Set([...gauges, ...counters, ...histograms.flatMap((h) => ['_bucket', '_sum', '_count'].map((s) => h + s))]);

type Rule = { record?: string; alert?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
type RuleGroup = { name: string; rules: Rule[] };
const rulesText = readFileSync(rulesPath, 'utf8');
const groups = (parse(rulesText) as { groups: RuleGroup[] }).groups;
const rules = groups.flatMap((g) => g.rules);
const alerts = rules.filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));

const promqlKeywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/** The series a PromQL expression selects: its names that are neither functions, keywords, label names nor values. */
function seriesNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // label values, regexes
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries ($__rate_interval too)
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names: string[] = [];
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = bare[m.index - 1] ?? ' ';
    if (/[0-9.]/.test(before)) continue; // 1e3, 5m
    if (bare.slice(m.index + m[0].length).trimStart().startsWith('(')) continue; // a function
    if (promqlKeywords.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return names;
}

/** GitHub's anchor of a Markdown heading. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
if (!promtool) {
  if (inCi) throw new Error('CI: promtool is not installed (Debian\'s prometheus package; .ci/run installs it); the alert rules cannot go untested in CI');
  console.warn('SKIPPED promtool checks of deploy/prometheus/rules.yml: promtool is not installed. Install it with `apt-get update && apt-get install -y prometheus`.');
}

describe('alert rules', () => {
  it.skipIf(!promtool)('pass promtool check rules', () => {
    const out = execFileSync('promtool', ['check', 'rules', rulesPath], { encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
  });

  it.skipIf(!promtool)('pass their unit tests (promtool test rules)', () => {
    const run = spawnSync('promtool', ['test', 'rules', rulesTestPath], { encoding: 'utf8' });
    expect(run.stdout + run.stderr, 'promtool test rules').toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('are each unit-tested both firing and not firing', () => {
    type AlertTest = { alertname: string; exp_alerts?: unknown[] };
    const tests = (parse(readFileSync(rulesTestPath, 'utf8')) as { rule_files: string[]; tests: { alert_rule_test?: AlertTest[] }[] });
    expect(tests.rule_files).toEqual(['rules.yml']);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of alerts) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${alert} is tested firing`).toBe(true);
      expect(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${alert} is tested not firing`).toBe(true);
    }
    expect(new Set(cases.map((c) => c.alertname))).toEqual(new Set(alerts.map((a) => a.alert)));
  });

  it('each have a severity, a summary, a description and a runbook section in docs/runbook.md', () => {
    const runbook = readFileSync(runbookPath, 'utf8');
    const headings = [...runbook.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!));
    const alertSections = [...runbook.matchAll(/^### (.+)$/gm)].map((m) => m[1]!.trim());
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      expect(['page', 'ticket'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toBeTruthy();
      expect(a.annotations?.description, a.alert).toBeTruthy();
      const [path, anchor] = (a.annotations?.runbook_url ?? '').split('#');
      expect(path, a.alert).toBe('docs/runbook.md');
      expect(headings, `${a.alert}: #${anchor} is a heading of docs/runbook.md`).toContain(anchor);
      expect(anchor, a.alert).toBe(anchorOf(a.alert));
    }
    // No section for an alert that is gone.
    expect(alertSections.sort()).toEqual(alerts.map((a) => a.alert).sort());
    // The runbook states the objectives the alerts hold the service to.
    expect(runbook).toContain('99.9% of API requests over 30 days');
    expect(runbook).toContain('within 500 ms');
  });

  it('name only series the services expose, and rules of this file', () => {
    for (const r of rules) {
      for (const name of seriesNames(r.expr)) expect(exposedSeries.has(name) || recorded.has(name), `${r.alert ?? r.record}: ${name}`).toBe(true);
    }
  });

  it('watch the scrape of every Deployment by its job', () => {
    const deployments = readFileSync(join(root, 'deploy', 'k8s', 'services.yaml'), 'utf8')
      .split(/^---$/m)
      .map((doc) => parse(doc) as { kind?: string; metadata?: { name?: string } } | null)
      .filter((d) => d?.kind === 'Deployment')
      .map((d) => d!.metadata!.name!)
      .sort();
    expect(deployments).toEqual(readdirSync(join(root, 'services'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort());
    const down = alerts.find((a) => a.alert === 'EfsServiceDown')!;
    expect(down.expr).toContain(`up{job=~"${deployments.join('|')}"}`);
    const absent = alerts.find((a) => a.alert === 'EfsServiceAbsent')!;
    expect([...absent.expr.matchAll(/absent\(up\{job="([^"]+)"\}\)/g)].map((m) => m[1]).sort()).toEqual(deployments);
  });

  it('are deployed as the PrometheusRule deploy/k8s/alerts.yaml, whose spec is rules.yml', () => {
    const manifest = parse(readFileSync(prometheusRulePath, 'utf8')) as { apiVersion: string; kind: string; spec: { groups: RuleGroup[] } };
    expect(manifest).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
    expect(manifest.spec.groups).toEqual(groups);
    // Written by deploy/prometheus/prometheusRule.ts, not edited by hand.
    expect(readFileSync(prometheusRulePath, 'utf8'), 'run `node deploy/prometheus/prometheusRule.ts`').toBe(prometheusRuleOf(rulesText));
  });
});

describe('the Grafana dashboard deploy/grafana/efs-overview.json', () => {
  type Target = { expr: string; datasource?: { uid?: string } };
  type Panel = { type: string; title: string; datasource?: { type?: string; uid?: string }; targets?: Target[]; panels?: Panel[] };
  const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8')) as { uid: string; templating: { list: { name: string; type: string; query: string }[] }; panels: Panel[] };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const queried = panels.filter((p) => p.type !== 'row');

  it('has a row per audience and takes its Prometheus from $datasource', () => {
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    const rows = panels.filter((p) => p.type === 'row').map((p) => p.title.split(':')[0]);
    expect(rows).toEqual(expect.arrayContaining(['API', 'Messaging', 'Dispatch', 'Telemetry', 'Webhooks']));
    expect(queried.length).toBeGreaterThan(0);
    for (const p of queried) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.datasource?.uid ?? '${datasource}', p.title).toBe('${datasource}');
    }
  });

  it('queries only series the services expose and the rules record', () => {
    for (const p of queried) {
      for (const t of p.targets!) {
        const names = seriesNames(t.expr);
        expect(names.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        for (const name of names) expect(exposedSeries.has(name) || recorded.has(name), `${p.title}: ${name}`).toBe(true);
      }
    }
  });

  it.skipIf(!promtool)('writes PromQL that parses (promtool check rules on its queries)', () => {
    const exprs = queried.flatMap((p) => p.targets!.map((t) => t.expr.replaceAll('$__rate_interval', '5m')));
    const dir = mkdtempSync(join(tmpdir(), 'efs-dashboard-'));
    try {
      const file = join(dir, 'queries.yml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] }));
      const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(run.stdout + run.stderr).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('seriesNames', () => {
  it('finds the series of an expression and nothing else', () => {
    expect(seriesNames('histogram_quantile(0.99, sum by (listener, le) (rate(http_server_request_duration_bucket{http_route=~"/v1/.+"}[$__rate_interval]))) > 0.5')).toEqual([
      'http_server_request_duration_bucket',
    ]);
    expect(seriesNames('max by (job) (up{job=~"a|b"}) == 0 and on (job) efs:x:rate5m > 1e3 unless foo offset 5m')).toEqual(['up', 'efs:x:rate5m', 'foo']);
  });
});
