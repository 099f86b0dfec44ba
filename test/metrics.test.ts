import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matching, parseScrape, tierAvailable, total, waitFor, type Sample } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { asSite, uid } from './commissioningHelpers.ts';
import { batteryWith, createEvent, discharge, enrolledSite, newProgram, waitForCommands } from './dispatchHelpers.ts';
import { item, postAccepted, siteWithBatteries } from './telemetryHelpers.ts';
import { WebhookReceiver } from './webhookReceiver.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('GET /metrics on the health port of the main command', () => {
  const t = useTestSystem({
    // A receiver on loopback; a delivery that fails is retried once, 200 ms later, then given up.
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    WEBHOOK_RETRY_SCHEDULE: '200ms',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await rx?.stop();
  });

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

  it('times each request between services by operation and outcome, and counts the records the consumers handled', async () => {
    const ok = { operation: 'commissioning.commission', outcome: 'ok', service: 'efs' };
    const sites = { consumer_group: 'efs-enrollment-sites', topic: 'efs.commissioning.sites' };
    const before = await scrape();
    const siteId = uid('metrics-site');
    expect((await t.api.post('/v1/commission', { site: { id: siteId }, devices: [], can_auto_enroll: false })).status).toBe(200);
    // Commissioning announces the site; enrollment's consumer of the sites topic handles it.
    const after = await waitFor(async () => {
      const now = await scrape();
      return total(now, 'efs_messaging_records_handled_total', sites) > total(before, 'efs_messaging_records_handled_total', sites) && now;
    }, { what: 'the site handled by enrollment' });
    expect(total(after, 'efs_messaging_request_duration_seconds_count', ok) - total(before, 'efs_messaging_request_duration_seconds_count', ok)).toBe(1);
    expect(matching(after, 'efs_messaging_request_duration_seconds_bucket', { ...ok, le: '+Inf' })).toHaveLength(1);
    expect(total(after, 'efs_messaging_request_duration_seconds_sum', ok)).toBeGreaterThan(0);
    for (const s of matching(after, 'efs_messaging_request_duration_seconds_count')) expect(s.labels.outcome).toMatch(/^(ok|client_error|server_error|timeout|error)$/);
    expect(matching(after, 'efs_messaging_records_dead_lettered_total', sites)).toEqual([]);
    for (const s of after) for (const v of Object.values(s.labels)) expect(v, `${s.name} ${JSON.stringify(s.labels)}`).not.toContain('metrics-site');
  });

  it('reads every outbox at scrape time: rows waiting, the oldest one\'s age, rows quarantined', async () => {
    const samples = await scrape();
    for (const service of ['gateway', 'commissioning', 'enrollment', 'program-catalog', 'event-dispatch']) {
      for (const name of ['efs_outbox_rows_waiting', 'efs_outbox_oldest_age_seconds', 'efs_outbox_rows_quarantined']) expect(matching(samples, name, { service }), `${name} ${service}`).toHaveLength(1);
    }
    // A row of a topic nobody knows is quarantined at once; a later row of its key waits behind it.
    const db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    try {
      const key = uid('metrics-key');
      await db.query(`insert into commissioning.outbox (id, topic, key, value) values ($1, 'efs.metrics.nowhere', $2, '{}')`, [randomUUID(), key]);
      await waitFor(async () => total(await scrape(), 'efs_outbox_rows_quarantined', { service: 'commissioning' }) === 1, { what: 'the row quarantined', timeoutMs: 20_000 });
      await db.query(`insert into commissioning.outbox (id, topic, key, value, created_at) values ($1, 'efs.commissioning.sites', $2, '{}', now() - interval '1 hour')`, [randomUUID(), key]);
      const held = await scrape();
      expect(total(held, 'efs_outbox_rows_waiting', { service: 'commissioning' })).toBe(1);
      expect(total(held, 'efs_outbox_oldest_age_seconds', { service: 'commissioning' })).toBeGreaterThanOrEqual(3600);
      expect(total(held, 'efs_outbox_rows_waiting', { service: 'enrollment' })).toBe(0);
      expect(total(held, 'efs_outbox_oldest_age_seconds', { service: 'enrollment' })).toBe(0);
      await db.query('delete from commissioning.outbox where key = $1', [key]);
      await db.query('update commissioning.outbox_quarantine set discarded_at = now() where key = $1', [key]);
      const after = await scrape();
      expect(total(after, 'efs_outbox_rows_quarantined', { service: 'commissioning' })).toBe(0);
      expect(total(after, 'efs_outbox_oldest_age_seconds', { service: 'commissioning' })).toBeLessThan(3600);
    } finally {
      await db.end();
    }
  });

  it('answers a scrape while an outbox does not answer, leaving that outbox out until it does', async () => {
    const db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    try {
      await db.query('begin');
      await db.query('lock table commissioning.outbox in access exclusive mode');
      const held = await scrape();
      expect(matching(held, 'efs_outbox_rows_waiting', { service: 'commissioning' })).toEqual([]);
      expect(matching(held, 'efs_outbox_rows_waiting', { service: 'enrollment' })).toHaveLength(1);
      expect(matching(held, 'http_server_request_duration_count').length).toBeGreaterThan(0);
      await db.query('rollback');
    } finally {
      await db.end();
    }
    await waitFor(async () => matching(await scrape(), 'efs_outbox_rows_waiting', { service: 'commissioning' }).length === 1, { what: 'the commissioning outbox back in the scrape' });
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

  /** What changed between two scrapes in the series of `name` with `labels`. */
  const moved = (before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);

  const expectNoIdLabel = (samples: Sample[], ids: readonly string[]) => {
    for (const s of samples) for (const v of Object.values(s.labels)) for (const id of ids) expect(v, `${s.name} ${JSON.stringify(s.labels)}`).not.toContain(id);
  };

  it('counts webhook attempts and deliveries by outcome, endpoints disabled, and the backlog while a delivery waits', async () => {
    const program = await newProgram(t);
    const subscribe = async (name: string, script: (number | 'hang')[]) => {
      const r = await t.api.post('/v1/webhooks', { url: rx.endpoint(name, script), event_types: ['enrollment.created'] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { id: string };
    };
    const service = { service: 'webhooks' };
    const before = await scrape();
    expect(matching(before, 'efs_webhooks_pending', service)).toHaveLength(1);
    expect(matching(before, 'efs_webhooks_pending_oldest_age_seconds', service)).toHaveLength(1);

    // One endpoint answers 200, one 500 (given up after its one retry), one 410 (disabled at
    // once), one hangs past the timeout the first time (the delivery waits, then succeeds).
    const ok = await subscribe('metrics-ok', [200]);
    const dead = await subscribe('metrics-dead', [500]);
    const gone = await subscribe('metrics-gone', [410]);
    const slow = await subscribe('metrics-slow', ['hang', 200]);
    const site = await enrolledSite(t, program);

    // While the slow endpoint's first attempt hangs, its delivery is the backlog.
    await rx.waitFor('metrics-slow', (r) => r.length >= 1, 'the hanging attempt');
    const waiting = await scrape();
    expect(total(waiting, 'efs_webhooks_pending', service)).toBeGreaterThanOrEqual(1);
    await waitFor(async () => total(await scrape(), 'efs_webhooks_pending_oldest_age_seconds', service) > 0.5, { what: 'the oldest pending delivery ageing' });

    await rx.waitFor('metrics-ok', (r) => r.length >= 1, 'the delivery');
    await rx.waitFor('metrics-dead', (r) => r.length >= 2, 'the attempt and its retry');
    await rx.waitFor('metrics-slow', (r) => r.length >= 2, 'the retry after the timeout');
    await waitFor(async () => (await t.api.get(`/v1/webhooks/${gone.id}`)).body.enabled === false, { what: 'disabled by 410' });
    const after = await waitFor(async () => {
      const s = await scrape();
      return moved(before, s, 'efs_webhooks_deliveries_total', { ...service, outcome: 'failed' }) >= 1 && moved(before, s, 'efs_webhooks_deliveries_total', { ...service, outcome: 'succeeded' }) >= 2 && total(s, 'efs_webhooks_pending', service) === 0 ? s : undefined;
    }, { what: 'the deliveries recorded and the backlog gone' });

    // ok 1 + slow 1 succeeded; dead 2 + gone 1 + slow 1 failed attempts.
    expect(moved(before, after, 'efs_webhooks_attempts_total', { ...service, result: 'succeeded' })).toBe(2);
    expect(moved(before, after, 'efs_webhooks_attempts_total', { ...service, result: 'failed' })).toBe(4);
    expect(moved(before, after, 'efs_webhooks_deliveries_total', { ...service, outcome: 'succeeded' })).toBe(2);
    expect(moved(before, after, 'efs_webhooks_deliveries_total', { ...service, outcome: 'failed' })).toBe(1);
    expect(moved(before, after, 'efs_webhooks_endpoints_disabled_total', { ...service, reason: 'gone' })).toBe(1);
    // Nothing is due: the disabled endpoint's queued delivery waits for it to be enabled, not for the service.
    expect(total(after, 'efs_webhooks_pending_oldest_age_seconds', service)).toBe(0);
    expectNoIdLabel(after, [site.siteId, site.enrollmentId, ok.id, dead.id, gone.id, slow.id, ...site.devices]);
    for (const w of [ok, dead, gone, slow]) await t.api.delete(`/v1/webhooks/${w.id}`);
  });

  it('counts readings accepted by kind, rejected by reason, stored, and the ingest lag from acceptance to storage', async () => {
    const { siteId, devices } = await siteWithBatteries(t, 2);
    const before = await scrape();
    await postAccepted(t.api, '/v1/telemetry/BATTERY', [item(devices[0]!, 0), item(devices[1]!, 0)]);
    const known = await scrape();
    const gateway = { service: 'gateway', kind: 'INTERVAL' };
    // postAccepted resends until every item is OK (a device just commissioned may not be known yet).
    expect(moved(before, known, 'efs_telemetry_readings_accepted_total', gateway)).toBeGreaterThanOrEqual(2);
    const mixed = await t.api.post('/v1/telemetry/BATTERY', {
      telemetry: [
        item(devices[0]!, 5, { duration_s: 'five minutes' }),
        item(uid('not-a-device'), 5),
        item(devices[1]!, 5, { start_time: '1999-12-31T23:55:00.000Z' }),
        item(devices[0]!, 5),
      ],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.results.map((r: { status: string }) => r.status)).toEqual(['FAILED', 'FAILED', 'FAILED', 'OK']);
    const posted = await scrape();
    expect(moved(known, posted, 'efs_telemetry_readings_accepted_total', gateway)).toBe(1);
    expect(moved(known, posted, 'efs_telemetry_readings_rejected_total', { ...gateway, reason: 'invalid' })).toBe(1);
    expect(moved(known, posted, 'efs_telemetry_readings_rejected_total', { ...gateway, reason: 'unknown_device' })).toBe(1);
    expect(moved(known, posted, 'efs_telemetry_readings_rejected_total', { ...gateway, reason: 'time_out_of_range' })).toBe(1);
    const accepted = moved(before, posted, 'efs_telemetry_readings_accepted_total', gateway);

    const ingest = { service: 'telemetry-ingest' };
    const after = await waitFor(async () => {
      const s = await scrape();
      return moved(before, s, 'efs_telemetry_readings_stored_total', { ...ingest, kind: 'INTERVAL' }) >= accepted ? s : undefined;
    }, { what: 'the accepted readings stored' });
    expect(moved(before, after, 'efs_telemetry_ingest_lag_seconds_count', ingest)).toBeGreaterThanOrEqual(2);
    expect(moved(before, after, 'efs_telemetry_ingest_lag_seconds_sum', ingest)).toBeGreaterThan(0);
    expect(matching(after, 'efs_telemetry_ingest_lag_seconds_bucket', { ...ingest, le: '300' })).toHaveLength(1);
    expectNoIdLabel(after, [siteId, ...devices]);
  });

  it('counts commands created, acknowledged and failed, their acknowledgement time, and events by status', async () => {
    const program = await newProgram(t);
    const site = await enrolledSite(t, program, [batteryWith(uid('b'), 5000), batteryWith(uid('b'), 5000)]);
    const dispatch = { service: 'event-dispatch' };
    const before = await scrape();
    expect(matching(before, 'efs_dispatch_events', { ...dispatch, status: 'UPCOMING' })).toHaveLength(1);
    const event = (await createEvent(t, { program_id: program.id, target_type: 'SITE', target_ids: [site.siteId], actions: [discharge(6000, 3600, 600)] })).body;
    const commands = await waitForCommands(t.api, event.id, 2);
    const created = await scrape();
    expect(moved(before, created, 'efs_dispatch_commands_created_total', dispatch)).toBe(2);
    expect(moved(before, created, 'efs_dispatch_events', { ...dispatch, status: 'UPCOMING' })).toBe(1);

    expect((await t.api.patch(`/v1/command/${commands[0].id}`, { device_status: 'OK' })).status).toBe(200);
    expect((await t.api.patch(`/v1/command/${commands[0].id}`, { device_status: 'OK' })).status).toBe(200);
    expect((await t.api.patch(`/v1/command/${commands[1].id}`, { device_status: 'FAILED_OFFLINE', device_status_reason: 'No heartbeat' })).status).toBe(200);
    expect((await t.utility.delete(`/v1/events/${event.id}`)).status).toBe(200);
    const after = await scrape();
    // The repeated acknowledgement changes nothing, and counts nothing.
    expect(moved(before, after, 'efs_dispatch_commands_acknowledged_total', dispatch)).toBe(1);
    expect(moved(before, after, 'efs_dispatch_commands_failed_total', { ...dispatch, device_status: 'FAILED_OFFLINE' })).toBe(1);
    expect(moved(before, after, 'efs_dispatch_command_acknowledgement_duration_seconds_count', dispatch)).toBe(2);
    expect(moved(before, after, 'efs_dispatch_command_acknowledgement_duration_seconds_sum', dispatch)).toBeGreaterThan(0);
    expect(moved(before, after, 'efs_dispatch_events', { ...dispatch, status: 'UPCOMING' })).toBe(0);
    expect(moved(before, after, 'efs_dispatch_events', { ...dispatch, status: 'CANCELED' })).toBe(1);
    expectNoIdLabel(after, [event.id, site.siteId, ...site.devices, ...commands.map((c: { id: string }) => c.id)]);
  });
});
