import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { allTopics, ProgramsTopic, ReadingsTopic, type ProgramMessage, type ReadingMessage, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { initTracing } from '@efs/telemetry';
import { KafkaTransport, NonRetriableError, ServiceUnavailableError } from '@efs/messaging';
import { apiClient, deleteTopicsWithPrefix, tierAvailable, testKafkaBrokers, testRegistryUrl, waitFor } from '@efs/testing';
import { startDistributedSystem, type DistributedSystem } from '../harness/distributed.ts';

// The files of test/distributed run one at a time (make test: --no-file-parallelism), after every
// other file, so the broker-restart test at the end never pulls Kafka away from another test.
const run = await tierAvailable('kafka');
initTracing({ serviceName: 'efs-test' });
const root = join(import.meta.dirname, '..', '..');
const logger = createLogger({ name: 'test', level: 'silent' });
const request = (op: string): RequestMessage => ({
  op,
  principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null },
  params: {},
  query: {},
  body: null,
});

describe.runIf(run)('Kafka transport against the real broker and registry', () => {
  const prefix = `m${randomBytes(4).toString('hex')}.`;
  const make = (replyInstanceId?: string) =>
    new KafkaTransport({ brokers: [testKafkaBrokers()], clientId: 'test', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix, ...(replyInstanceId ? { replyInstanceId } : {}) });
  let caller: KafkaTransport;
  let server: KafkaTransport;
  beforeAll(async () => {
    server = make();
    caller = make('caller');
    await Promise.all([server.start(), caller.start()]);
  });
  afterAll(async () => {
    await Promise.allSettled([caller?.stop(), server?.stop()]);
    await deleteTopicsWithPrefix(prefix);
  });

  it('answers a request through request and reply topics', async () => {
    await server.serve('catalog', async (req) => ({ status: 200, body: JSON.stringify({ op: req.op }) }));
    const reply = await caller.request('catalog', request('ping'), { timeoutMs: 10_000 });
    expect(reply).toEqual({ status: 200, body: JSON.stringify({ op: 'ping' }) });
  });

  it('times out with ServiceUnavailableError when no service answers the target', async () => {
    const started = Date.now();
    await expect(caller.request('telemetry', request('nobody'), { timeoutMs: 500 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('delivers events to a consumer group, Avro-encoded with the registry schema id, and dead-letters what fails', { timeout: 150_000 }, async () => {
    const got: string[] = [];
    await server.subscribe(ProgramsTopic, 'good', async (m) => void got.push(m.value.name));
    await server.subscribe(ProgramsTopic, 'bad', async () => {
      throw new NonRetriableError('cannot process');
    });
    const p: ProgramMessage = {
      id: 'p-1', utility_id: 'u', name: 'kafka program', description: '', eligible_device_types: ['BATTERY'], zip_codes: ['88800'],
      can_auto_enroll: false, minimum_reserve_percentage: 0, minimum_commitment_months: 12, participation_months: [1],
      rates: { upfront_per_kwh: 1, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 }, enrollment_form: [],
      terms_and_conditions_version: null, terms_and_conditions_text: null, auto_approve_after_ms: null,
      created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
    };
    await caller.publish(ProgramsTopic, p.id, p);
    await waitFor(() => got.includes('kafka program'), { timeoutMs: 60_000, what: 'the event' });

    // Read the raw records back as any Confluent-compatible consumer (kcat -s value=avro) would.
    const kafka = new Kafka({ brokers: [testKafkaBrokers()], logLevel: logLevel.NOTHING });
    const registry = new SchemaRegistry({ host: testRegistryUrl() });
    const consumer = kafka.consumer({ groupId: `${prefix}inspect` });
    const raw: { topic: string; value: Buffer; headers: Record<string, string> }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topics: [`${prefix}${ProgramsTopic.name}`, `${prefix}${ProgramsTopic.name}.dlt`], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        raw.push({ topic, value: message.value!, headers });
      },
    });
    await waitFor(() => raw.length >= 2, { timeoutMs: 60_000, what: 'the record and its dead letter' }).catch((e: Error) => {
      throw new Error(`${e.message}; got ${JSON.stringify(raw.map((r) => r.topic))}`);
    });
    await consumer.disconnect();
    for (const r of raw) {
      expect(r.value[0]).toBe(0); // Confluent wire format: magic byte, then the schema id
      expect(await registry.decode(r.value)).toMatchObject({ id: 'p-1', name: 'kafka program', minimum_commitment_months: 12 });
      expect(r.headers['efs-message-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    }
    const dead = raw.find((r) => r.topic.endsWith('.dlt'))!;
    expect(dead.headers).toMatchObject({ 'efs-dlt-reason': 'NonRetriableError: cannot process', 'efs-dlt-group': 'bad' });
  });

  it('publishes a batch acknowledged as a whole and hands it to a batch consumer in order per key, dead-lettering only what fails alone', { timeout: 150_000 }, async () => {
    const got: ReadingMessage[] = [];
    const batches: number[] = [];
    await server.subscribeBatch(
      ReadingsTopic,
      'bulk',
      async (ms) => {
        if (ms.some((m) => m.value.readings.some((r) => r.device_id === 'poison'))) throw new NonRetriableError('cannot store');
        batches.push(ms.length);
        got.push(...ms.flatMap((m) => m.value.readings));
      },
      // From the beginning of this run's own topic: the batch rules are under test here, not
      // whether a consumer still joining its group sees a message published at that moment.
      { maxBatchSize: 7, concurrency: 3, fromBeginning: true },
    );
    const reading = (device: string, i: number): ReadingMessage => ({
      integrator_id: 'i', site_id: 's', device_id: device, kind: 'INTERVAL', start_time: new Date(i).toISOString(), received_at: new Date(i).toISOString(), duration_s: 300, last_is_online: null, last_mode: null,
      battery_last_power_charge_w: null, battery_last_power_discharge_w: null, battery_total_energy_charge_wh: null, battery_total_energy_discharge_wh: null,
      battery_last_stored_energy_wh: null, battery_last_capacity_energy_wh: null, battery_last_state_of_charge_percentage: null, battery_last_state_of_health_percentage: null,
      battery_last_backup_reserve_percentage: null, last_is_grid_online: null, home_total_energy_wh: null, home_last_power_w: null, solar_total_energy_wh: null,
      solar_last_power_w: null, oem_raw_data: null, battery_lifetime_energy_charge_wh: null, battery_lifetime_energy_discharge_wh: null,
    });
    const sent = Array.from({ length: 60 }, (_, i) => reading(`d${i % 4}`, i));
    sent.splice(30, 0, reading('poison', 999));
    await caller.publishBatch(ReadingsTopic, sent.map((r) => ({ key: `i/${r.device_id}`, value: { readings: [r] } })), { timeoutMs: 30_000 });
    await waitFor(() => got.length === 60, { timeoutMs: 60_000, what: 'every reading but the poison one' });
    for (const d of ['d0', 'd1', 'd2', 'd3']) {
      const times = got.filter((r) => r.device_id === d).map((r) => Date.parse(r.start_time));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
    expect(Math.max(...batches)).toBeLessThanOrEqual(7);
  });
});

describe.runIf(run)('distributed mode: every service its own process on Kafka', () => {
  let sys: DistributedSystem;
  beforeAll(async () => {
    sys = await startDistributedSystem({ REQUEST_TIMEOUT_MS: '3000' });
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
  }, 120_000);

  it('serves GET /v1/programs through request/reply on Kafka, from the catalog schema', async () => {
    const r = await sys.api.get('/v1/programs?zip_code=88801');
    expect(r.status, sys.logs('gateway')).toBe(200);
    expect(r.body.map((p: { name: string }) => p.name)).toEqual(['Sandbox Battery Flex', 'Sandbox Battery Capacity', 'Sandbox EV Smart Charging']);
    expect((await sys.api.get('/v1/programs?zip_code=88803')).body).toEqual([]);
  });

  it('runs the typical flow across services over Kafka: commission with auto-enroll, site token, enroll, sandbox approval', async () => {
    const site = { id: `site-${Date.now()}`, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way', zip_code: '88801' };
    const device = (id: string) => ({ id, site_id: site.id, manufacturer_name: 'Acme', product_name: 'PW', serial_number: `SN-${id}`, type: 'BATTERY', attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z' });
    // commissioning → catalog (eligible programs) → enrollment (auto-enroll), each over request/reply.
    const c = await sys.api.post('/v1/commission', { site, devices: [device('b1'), device('b2')], can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body.programs.map((p: { name: string }) => p.name)).toEqual(['Sandbox Battery Flex', 'Sandbox Battery Capacity']);
    expect(c.body.enrollment).toMatchObject({ enroll_method: 'AUTO_ENROLL', status: 'PENDING', site_id: site.id, device_ids: ['b1', 'b2'] });

    const token = await sys.api.post(`/v1/auth/site/${site.id}`);
    expect(token.status).toBe(200);
    const app = apiClient(sys.urls.public, token.body.site_access_token);
    // The catalog's read model of the site arrived over the sites and devices topics.
    const programs = await app.get(`/v1/site/${site.id}/programs`);
    expect(programs.status).toBe(200);
    const capacity = programs.body.find((p: { name: string }) => p.name === 'Sandbox Battery Capacity');
    expect(capacity.earnings_for_site_upfront).toBeGreaterThan(0);

    const enroll = await app.post(`/v1/site/${site.id}/enrollments`, {
      program_id: capacity.id,
      device_ids: ['b1'],
      has_agreed_to_terms_and_conditions: true,
      terms_and_conditions_version: capacity.terms_and_conditions_version,
      program_specific_attributes: [{ name: 'utility_account_number', value: 'UA-1' }],
    });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    expect(enroll.body).toMatchObject({ status: 'PENDING', enroll_method: 'USER_ACTION' });
    await waitFor(async () => {
      const list = await app.get(`/v1/site/${site.id}/enrollments`);
      return list.body.find((e: { id: string; status: string }) => e.id === enroll.body.id && e.status === 'ACTIVE');
    }, { timeoutMs: 30_000, what: 'sandbox approval' });
    const early = await app.delete(`/v1/site/${site.id}/enrollment/${enroll.body.id}`);
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('MINIMUM_COMMITMENT_NOT_MET');
  }, 120_000);

  it('dispatches an event across processes: its commands are readable and announced on efs.dispatch.commands, keyed by device', async () => {
    const siteId = `dr-${Date.now()}`;
    const device = (id: string) => ({ id, site_id: siteId, manufacturer_name: 'Acme', product_name: 'PW', serial_number: `SN-${id}`, type: 'BATTERY', attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z' });
    const site = { id: siteId, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way', zip_code: '88801' };
    const c = await sys.api.post('/v1/commission', { site, devices: [device('d1'), device('d2')], can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const programId = c.body.enrollment.program_id as string;
    // Sandbox approval (enrollment) → efs.enrollment.enrollments → dispatch's read model: retried until dispatch knows the devices.
    const body = { program_id: programId, target_type: 'SITE', target_ids: [siteId], actions: [{ starts_at: new Date(Date.now() + 3600_000).toISOString(), duration_s: 900, mode: 'DISCHARGE', setpoint_w: 7001 }] };
    const event = await waitFor(async () => {
      const r = await sys.utility.post('/v1/events', body);
      return r.status === 200 ? r.body : undefined;
    }, { timeoutMs: 60_000, what: `the event accepted:\n${sys.logs('event-dispatch')}` });
    const commands = await waitFor(async () => {
      const r = await sys.api.get(`/v1/commands?site_id=${siteId}`);
      return r.body.length === 2 ? r.body : undefined;
    }, { timeoutMs: 30_000, what: 'the commands' });
    expect(commands.map((x: any) => [x.device_id, x.battery_commands.setpoint_w, x.event_id]).sort()).toEqual([
      ['d1', 3501, event.id],
      ['d2', 3500, event.id],
    ]);

    const kafka = new Kafka({ brokers: [testKafkaBrokers()], logLevel: logLevel.NOTHING });
    const registry = new SchemaRegistry({ host: testRegistryUrl() });
    const consumer = kafka.consumer({ groupId: `${sys.topicPrefix}inspect-commands` });
    const seen: { key: string; value: any }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topics: [`${sys.topicPrefix}efs.dispatch.commands`], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push({ key: message.key!.toString(), value: await registry.decode(message.value!) }) });
    try {
      await waitFor(() => seen.filter((m) => m.value.event_id === event.id).length >= 2, { timeoutMs: 60_000, what: 'command.created on the topic' });
    } finally {
      await consumer.disconnect();
    }
    const created = seen.filter((m) => m.value.event_id === event.id);
    expect(created.map((m) => [m.key, m.value.change, m.value.id]).sort()).toEqual(commands.map((x: any) => [`sandbox-integrator/${siteId}/${x.device_id}`, 'CREATED', x.id]).sort());
  }, 150_000);

  let telemetryDevice = '';
  it('takes telemetry through the readings topic into telemetry-ingest, and serves it to the utility', async () => {
    const site = { id: `tsite-${Date.now()}`, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way', zip_code: '88801' };
    telemetryDevice = `${site.id}-bat`;
    const device = { id: telemetryDevice, site_id: site.id, manufacturer_name: 'Acme', product_name: 'PW', serial_number: 'SN-t', type: 'BATTERY', attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z' };
    const c = await sys.api.post('/v1/commission', { site, devices: [device], can_auto_enroll: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const programId = c.body.enrollment.program_id as string;
    const start = Math.floor(Date.now() / 300_000) * 300_000 - 3_600_000;
    const item = (i: number) => ({ device_id: telemetryDevice, start_time: new Date(start + i * 300_000).toISOString(), duration_s: 300, battery_total_energy_discharge_wh: 100 + i });
    const posted = await waitFor(async () => {
      const r = await sys.api.post('/v1/telemetry/BATTERY', { telemetry: [item(0), item(1), item(2), { device_id: 'unknown', start_time: item(0).start_time, duration_s: 300 }] });
      return r.status === 200 && r.body.results[0].status === 'OK' ? r.body : undefined;
    }, { timeoutMs: 30_000, what: `the gateway to know the device:\n${sys.logs('gateway')}` });
    expect(posted.results.map((x: { status: string }) => x.status)).toEqual(['OK', 'OK', 'OK', 'FAILED']);
    const rows = await waitFor(async () => {
      const r = await sys.utility.post('/v1/telemetry/historical', { program_id: programId, start_time: new Date(start).toISOString(), end_time: new Date(start + 3_600_000).toISOString() });
      return r.status === 200 && r.body.length === 3 ? r.body : undefined;
    }, { timeoutMs: 30_000, what: `the readings stored:\n${sys.logs('telemetry-ingest')}` });
    expect(rows.map((x: { battery_total_energy_discharge_wh: number }) => x.battery_total_energy_discharge_wh)).toEqual([100, 101, 102]);
  }, 120_000);

  it('keeps every service table in its own schema', async () => {
    const pg = await import('pg');
    const c = new pg.default.Client({ connectionString: sys.database.url });
    await c.connect();
    const rows = (await c.query("select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog','information_schema') order by 1, 2")).rows as { table_schema: string; table_name: string }[];
    await c.end();
    const schemas = new Set(rows.map((r) => r.table_schema));
    expect([...schemas].every((s) => ['auth', 'catalog', 'commissioning', 'enrollment', 'dispatch', 'telemetry', 'webhooks'].includes(s)), JSON.stringify([...schemas])).toBe(true);
    expect(rows.filter((r) => r.table_schema === 'catalog').map((r) => r.table_name)).toEqual(expect.arrayContaining(['programs', 'program_zip_codes', 'program_terms', 'outbox']));
    expect(rows.some((r) => r.table_schema === 'public')).toBe(false);
  });

  it('stops a revoked client token on every gateway process within seconds', async () => {
    const second = await sys.addGateway();
    const cli = (...args: string[]) => execFileSync(process.execPath, [join(root, 'cli', 'src', 'main.ts'), ...args], { cwd: root, env: { ...process.env, ...sys.env, LOG_LEVEL: 'warn' }, encoding: 'utf8' });
    try {
      const created = cli('client-token', 'create', '--integrator', 'acme', '--name', 'Acme');
      const id = /^id: (\S+)$/m.exec(created)![1]!;
      const token = /^token: (efs_ct_\S+)$/m.exec(created)![1]!;
      const status = (base: string) => fetch(`${base}/v1/programs`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
      await waitFor(async () => (await status(sys.urls.public)) === 200 && (await status(second.url)) === 200, { timeoutMs: 20_000, what: 'the new token on both gateways' });
      cli('client-token', 'revoke', id);
      const revokedAt = Date.now();
      await waitFor(async () => (await status(sys.urls.public)) === 401 && (await status(second.url)) === 401, { timeoutMs: 10_000, intervalMs: 100, what: 'the revocation on both gateways' });
      const took = Date.now() - revokedAt;
      console.log(`revocation reached both gateway processes ${took} ms after the CLI returned`);
      expect(took).toBeLessThan(10_000);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('answers 503 within its deadline while the broker is down, and recovers when it returns', async () => {
    const kafkaSh = join(root, 'deploy', 'local', 'kafka.sh');
    const pid = execFileSync('bash', [kafkaSh, 'pid'], { encoding: 'utf8' }).trim();
    expect(pid).toMatch(/^\d+$/);
    process.kill(Number(pid), 'SIGKILL');
    try {
      await waitFor(async () => !(await fetch(`http://${testKafkaBrokers()}`).then(() => true, (e: Error & { cause?: { code?: string } }) => e.cause?.code !== 'ECONNREFUSED')), { timeoutMs: 10_000, what: 'the broker to go away' });
      const started = Date.now();
      const r = await sys.api.get('/v1/programs');
      const took = Date.now() - started;
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status_code: 503 });
      expect(r.headers.get('retry-after')).toBe('1');
      expect(took).toBeLessThan(3000 + 1500);
      // Telemetry waits for the broker's acknowledgement: none comes, so 503 (resend), not a hang.
      const tStarted = Date.now();
      const t = await sys.api.post('/v1/telemetry/BATTERY', { telemetry: [{ device_id: telemetryDevice, start_time: new Date().toISOString(), duration_s: 300 }] });
      expect(t.status, JSON.stringify(t.body)).toBe(503);
      expect(t.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status_code: 503 });
      expect(t.headers.get('retry-after')).toBe('1');
      expect(Date.now() - tStarted).toBeLessThan(3000 + 1500);
    } finally {
      execFileSync('bash', [kafkaSh, 'start'], { stdio: 'ignore' });
    }
    await waitFor(async () => (await sys.api.get('/v1/programs')).status === 200, { timeoutMs: 90_000, intervalMs: 1000, what: `recovery:\n${sys.logs('gateway')}` });
  }, 180_000);
});
