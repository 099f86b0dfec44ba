import { describe, expect, it } from 'vitest';
import { tierAvailable } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { asSite, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

/** One series of a Prometheus text scrape: its name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const matching = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) => matching(samples, name, labels).reduce((n, s) => n + s.value, 0);

describe.runIf(run)('GET /metrics on the health port of the main command', () => {
  const t = useTestSystem();

  const scrape = async (): Promise<Sample[]> => {
    const r = await fetch(`${t.system.healthUrl}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    return parseScrape(await r.text());
  };

  it('counts requests by route template and status class, and holds no id as a label value', async () => {
    const siteId = uid('metrics-site');
    const route = { http_route: '/v1/site/:siteId/devices', http_request_method: 'GET', listener: 'public', service: 'gateway' };
    const commissioned = await t.api.post('/v1/commission', { site: { id: siteId }, devices: [], can_auto_enroll: false });
    expect(commissioned.status).toBe(200);
    const site = await asSite(t, siteId);
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await site.get(`/v1/site/${siteId}/devices`)).status).toBe(200);
    // Another site's devices: refused (4xx) on the same route.
    expect((await site.get(`/v1/site/${uid('metrics-site')}/devices`)).status).toBeGreaterThanOrEqual(400);
    const after = await scrape();

    const ok = { ...route, http_response_status_class: '2xx' };
    expect(total(after, 'http_server_request_duration_count', ok) - total(before, 'http_server_request_duration_count', ok)).toBe(3);
    expect(total(after, 'http_server_request_duration_count', { ...route, http_response_status_class: '4xx' })).toBeGreaterThan(total(before, 'http_server_request_duration_count', { ...route, http_response_status_class: '4xx' }));
    expect(matching(after, 'http_server_request_duration_bucket', { ...ok, le: '+Inf' })).toHaveLength(1);
    expect(total(after, 'http_server_request_duration_sum', ok)).toBeGreaterThan(0);

    // Bounded label values: the site's id (in the path of every request above) is in none.
    for (const s of after) for (const v of Object.values(s.labels)) expect(v, `${s.name} ${JSON.stringify(s.labels)}`).not.toContain('metrics-site');
    expect(new Set(matching(after, 'http_server_request_duration_count').map((s) => s.labels.listener))).not.toContain(undefined);
    for (const s of matching(after, 'http_server_request_duration_count')) expect(s.labels.http_response_status_class).toMatch(/^[1-5]xx$/);
  });

  it('counts an Idempotency-Key replay on its listener', async () => {
    const body = { site: { id: uid('metrics-site') }, devices: [], can_auto_enroll: false };
    const key = { 'idempotency-key': uid('metrics-key') };
    const before = total(await scrape(), 'efs_http_idempotency_replays_total', { listener: 'public', service: 'gateway' });
    expect((await t.api.post('/v1/commission', body, key)).status).toBe(200);
    const again = await t.api.post('/v1/commission', body, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(total(await scrape(), 'efs_http_idempotency_replays_total', { listener: 'public', service: 'gateway' }) - before).toBe(1);
  });

  it('exposes the runtime, database pool and log series, each labelled with a service', async () => {
    const samples = await scrape();
    expect(matching(samples, 'v8js_memory_heap_used').length).toBeGreaterThan(0);
    expect(samples.some((s) => s.name.startsWith('nodejs_eventloop_delay_'))).toBe(true);
    expect(matching(samples, 'db_client_connection_count', { db_client_connection_state: 'used', service: 'efs' })).toHaveLength(1);
    expect(matching(samples, 'db_client_connection_count', { db_client_connection_state: 'idle', service: 'efs' })).toHaveLength(1);
    expect(matching(samples, 'db_client_connection_pending_requests', { service: 'efs' })).toHaveLength(1);
    expect(matching(samples, 'efs_log_lines_dropped_total', { service: 'efs' })).toHaveLength(1);
    for (const s of samples.filter((x) => x.name !== 'target_info')) expect(s.labels.service, s.name).toBeTruthy();
  });
});
