/**
 * Webhook delivery under a burst: the commands of one utility event over `--devices` devices
 * (one command.created each, as event-dispatch announces them on efs.dispatch.commands) reach
 * the webhooks service, which stores them and delivers each, signed, to one integrator's endpoint.
 * Each party is a process of its own: the webhooks service (`services/webhooks/src/main.ts`, the
 * measured one, on the shared Kafka and a fresh Postgres database), the receiver
 * (`bench/webhookReceiver.ts`) and this process, which publishes the burst and watches. Prints
 * deliveries per second from the first publish to the last distinct webhook-id received, CPU
 * per delivery of the webhooks process and of Postgres, messages lost (expected − distinct
 * received: must be 0) and duplicated, and the bare reference of the same run: the same number
 * of signed POSTs from a plain sender process straight to the receiver.
 *
 *   node bench/webhookDelivery.ts [--devices 100000] [--endpoint-concurrency 32]   (make bench-webhooks)
 *
 * Needs Kafka, the registry and Postgres (make infra-up).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { WebhooksOperations } from '@efs/api';
import { CommonEnv, parseConfig } from '@efs/config';
import { CommandsTopic, type CommandMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { call } from '@efs/messaging';
import { createTransport } from '@efs/runtime';
import { createTestDatabase, deleteTopicsWithPrefix, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, freePort, testKafkaBrokers, testRegistryUrl } from '@efs/testing';
import { commSource, cpuBetween, machineBusyMs, pidSource, snapshot } from './procCpu.ts';
import { Cleanup, launch, root, stopChild } from './systems.ts';

const { values } = parseArgs({ options: { devices: { type: 'string', default: '100000' }, 'endpoint-concurrency': { type: 'string', default: '32' } } });
const devices = Number(values.devices);
const perEndpoint = Number(values['endpoint-concurrency']);
const command = `node bench/webhookDelivery.ts --devices ${devices} --endpoint-concurrency ${perEndpoint}`;
const runDir = join(root, '.run', 'bench', `webhooks-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(runDir, { recursive: true });
const log = (line: string) => console.log(line);
const cleanup = new Cleanup();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanup.runAll().then(() => process.exit(130)));

async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const stats = async (base: string) => (await (await fetch(`${base}/stats`)).json()) as { received: number; unique: number; checked: number; badSignatures: number };

try {
  log(`command: ${command}`);
  const database = await createTestDatabase('efs_bench_wh');
  cleanup.add('drop the database', () => database.drop());
  const topicPrefix = `benchwh${randomBytes(4).toString('hex')}.`;
  cleanup.add(`delete topics ${topicPrefix}*`, () => deleteTopicsWithPrefix(topicPrefix));

  const receiverPort = await freePort();
  const receiver = launch(cleanup, process.execPath, ['bench/webhookReceiver.ts'], { ...process.env, PORT: String(receiverPort) }, join(runDir, 'receiver.log'));
  cleanup.add('stop the receiver', () => stopChild(receiver, 5000));
  const receiverBase = `http://127.0.0.1:${receiverPort}`;
  await waitUntil('the receiver', async () => ((await fetch(`${receiverBase}/stats`)).ok ? true : undefined));

  const healthPort = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    KAFKA_BROKERS: testKafkaBrokers(),
    SCHEMA_REGISTRY_URL: testRegistryUrl(),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    HEALTH_PORT: String(healthPort),
    LOG_LEVEL: 'warn',
    SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    WEBHOOK_ENDPOINT_CONCURRENCY: String(perEndpoint),
  };
  const service = launch(cleanup, process.execPath, ['services/webhooks/src/main.ts'], env, join(runDir, 'webhooks.log'));
  cleanup.add('stop the webhooks service', () => stopChild(service));
  await waitUntil('the webhooks service', async () => ((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok ? true : undefined));

  const logger = createLogger({ name: 'bench', level: 'warn' });
  const transport = createTransport(parseConfig(CommonEnv, env), logger, { replyInstanceId: `bench-${randomBytes(4).toString('hex')}` });
  await transport.start();
  cleanup.add('stop the transport', () => transport.stop());

  const integratorId = 'bench-integrator';
  const principal = { kind: 'CLIENT' as const, integrator_id: integratorId, utility_id: null, site_id: null, token_id: 'bench' };
  const sub = await call(transport, WebhooksOperations.createWebhook, { principal, body: { url: `${receiverBase}/hook`, event_types: ['command.created'] } }, { timeoutMs: 30_000 });
  await fetch(`${receiverBase}/secret`, { method: 'POST', body: sub.secret });

  // The burst: one command.created per device, as the fan-out of one event announces them.
  const now = new Date();
  const startsAt = new Date(now.getTime() + 3600_000).toISOString();
  const endsAt = new Date(now.getTime() + 7200_000).toISOString();
  const eventId = randomUUID();
  const messages = Array.from({ length: devices }, (_, i): { key: string; value: CommandMessage } => {
    const siteId = `site-${Math.floor(i / 10)}`;
    const deviceId = `device-${i}`;
    return {
      key: `${integratorId}/${siteId}/${deviceId}`,
      value: {
        change: 'CREATED',
        id: randomUUID(),
        event_id: eventId,
        integrator_id: integratorId,
        utility_id: 'bench-utility',
        program_id: 'bench-program',
        device_id: deviceId,
        site_id: siteId,
        starts_at: startsAt,
        ends_at: endsAt,
        duration_s: 3600,
        battery_commands: { mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 5000, backup_reserve_percentage: 20, enable_grid_import: false },
        status: 'OK',
        device_status: 'PENDING',
        device_status_reason: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      },
    };
  });

  const sources = [pidSource('webhooks', service.pid!), commSource('postgres', 'postgres')];
  const busyBefore = machineBusyMs();
  const before = snapshot(sources);
  const started = performance.now();
  for (let i = 0; i < messages.length; i += 5000) await transport.publishBatch(CommandsTopic, messages.slice(i, i + 5000), { timeoutMs: 60_000 });
  const published = performance.now() - started;
  let last = { unique: -1, at: performance.now() };
  let final = await stats(receiverBase);
  // Until every message arrived, or nothing new arrived for 60 s.
  while (final.unique < devices && performance.now() - last.at < 60_000) {
    await new Promise((r) => setTimeout(r, 250));
    final = await stats(receiverBase);
    if (final.unique !== last.unique) last = { unique: final.unique, at: performance.now() };
  }
  const elapsed = (final.unique === devices ? last.at : performance.now()) - started;
  const cpu = cpuBetween(before, snapshot(sources));
  const busy = machineBusyMs() - busyBefore;

  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const byStatus = (await db.query(`select status, count(*)::int as n from webhooks.deliveries group by status order by status`)).rows as { status: string; n: number }[];
  await db.end();

  // The bare reference, same run: signed POSTs from a plain process straight to the receiver.
  const bare = JSON.parse(execFileSync(process.execPath, ['bench/webhookBareSender.ts', `${receiverBase}/bare`, String(devices), String(perEndpoint)], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1)!) as { sent: number; ms: number; cpuMs: number };

  const perDelivery = (ms: number | undefined) => (ms === undefined ? 'n/a' : (ms / devices).toFixed(3));
  log('');
  log(`burst: ${devices.toLocaleString('en-US')} command.created messages to one endpoint (published in ${(published / 1000).toFixed(1)} s)`);
  log(`delivered: ${final.unique.toLocaleString('en-US')} distinct webhook-ids in ${(elapsed / 1000).toFixed(1)} s = ${Math.round((final.unique / elapsed) * 1000).toLocaleString('en-US')} deliveries/s`);
  log(`lost: ${devices - final.unique}   duplicates: ${final.received - final.unique}   signatures checked by the reference verifier: ${final.checked} (bad: ${final.badSignatures})`);
  log(`deliveries by status: ${byStatus.map((r) => `${r.status} ${r.n}`).join(', ')}`);
  log(`CPU ms per delivery: webhooks process ${perDelivery(cpu.get('webhooks'))}, Postgres (every backend, other engineers' too) ${perDelivery(cpu.get('postgres'))}; machine busy ${(busy / elapsed).toFixed(2)} cores on average`);
  log(`bare reference (plain sender process → same receiver, ${perEndpoint} connections): ${Math.round((bare.sent / bare.ms) * 1000).toLocaleString('en-US')} POSTs/s, sender CPU ${(bare.cpuMs / bare.sent).toFixed(3)} ms per POST`);
  log(`command: ${command}`);
  if (final.unique !== devices) process.exitCode = 1;
} finally {
  await cleanup.runAll();
}
