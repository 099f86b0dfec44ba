import { randomUUID } from 'node:crypto';
import {
  CommandsTopic,
  DemandResponseEventsTopic,
  DevicesTopic,
  EnrollmentsTopic,
  ProgramGroupsTopic,
  ProgramsTopic,
  deviceKey,
  type CommandMessage,
  type OperationDef,
  type DemandResponseEventMessage,
  type DeviceMessage,
  type EnrollmentMessage,
  type Principal,
  type ProgramMessage,
} from '@efs/contracts';
import { migrateSchema, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { createTestDatabase, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import type { DispatchConfig } from '../src/config.ts';
import { DISPATCH_SCHEMA, createDispatchService, type DispatchService } from '../src/service.ts';

export const INTEGRATOR = 'integrator-a';
export const UTILITY = 'utility-1';
export const T0 = Date.parse('2026-06-01T12:00:00.000Z');

export const utilityPrincipal = (utilityId = UTILITY): Principal => ({ kind: 'UTILITY', integrator_id: null, utility_id: utilityId, site_id: null, token_id: 'k' });
export const clientPrincipal = (integratorId = INTEGRATOR): Principal => ({ kind: 'CLIENT', integrator_id: integratorId, utility_id: null, site_id: null, token_id: 'c' });
export const sitePrincipal = (siteId: string, integratorId = INTEGRATOR): Principal => ({ kind: 'SITE', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: 's' });

export function programMessage(over: Partial<ProgramMessage> = {}): ProgramMessage {
  return {
    id: randomUUID(), utility_id: UTILITY, name: 'Peak', description: '', eligible_device_types: ['BATTERY'], zip_codes: ['88801'], can_auto_enroll: false,
    minimum_reserve_percentage: 20, minimum_commitment_months: null, participation_months: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    rates: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 }, enrollment_form: [], terms_and_conditions_version: null,
    terms_and_conditions_text: null, auto_approve_after_ms: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...over,
  };
}

export function deviceMessage(siteId: string, id: string, over: Partial<DeviceMessage> = {}): DeviceMessage {
  return {
    integrator_id: INTEGRATOR, site_id: siteId, id, manufacturer_name: 'Acme', product_name: 'PowerBox', serial_number: `sn-${id}`, type: 'BATTERY',
    attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, reserve_percentage: null,
    install_date: '2025-12-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', deleted: false, ...over,
  };
}

export function enrollmentMessage(programId: string, siteId: string, deviceIds: string[], over: Partial<EnrollmentMessage> = {}): EnrollmentMessage {
  return {
    id: randomUUID(), integrator_id: INTEGRATOR, utility_id: UTILITY, site_id: siteId, program_id: programId, device_ids: deviceIds, enroll_method: 'USER_ACTION',
    status: 'ACTIVE', status_reason: null, enrolled_at: '2026-01-02T00:00:00.000Z', unenrolled_at: null, program_specific_attributes: [],
    has_agreed_to_terms_and_conditions: null, terms_and_conditions_version: null, group_ids: [], created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-02T00:00:00.000Z', ...over,
  };
}

export interface Harness {
  database: TestDatabase;
  db: Database;
  transport: InProcessTransport;
  service: DispatchService;
  /** The service's clock; tests move it. */
  clock: { now: number };
  events: DemandResponseEventMessage[];
  commands: { key: string | null; value: CommandMessage }[];
  call(op: OperationDef, principal: Principal, req?: { params?: Record<string, string>; query?: Record<string, string | string[]>; body?: unknown }): Promise<{ status: number; body: any }>;
  /** Publishes and waits until every consumer handled it. */
  publish(kind: 'program' | 'device' | 'enrollment', value: ProgramMessage | DeviceMessage | EnrollmentMessage, messageId?: string): Promise<void>;
  /** Returns once every announcement is published and every consumer has handled what it got. */
  settle(): Promise<void>;
  /** Stops the service and its transport, and starts a new instance on the same database (a process restart). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Event-dispatch alone on a fresh Postgres database, with the in-process transport, a fake clock
 * and the topics it reads fed by hand. Its own announcements are captured.
 */
export async function startHarness(config: Partial<DispatchConfig> = {}): Promise<Harness> {
  const logger = createLogger({ name: 'dispatch-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const database = await createTestDatabase();
  const db = await openDatabase({ url: database.url, dataDir: '', logger, poolMax: 10 });
  await migrateSchema(db.knex, DISPATCH_SCHEMA, migrations);
  const clock = { now: T0 };
  const events: DemandResponseEventMessage[] = [];
  const commands: { key: string | null; value: CommandMessage }[] = [];
  // The test runs the scheduler (runOnce) when it moves the clock: its own task is stopped once the
  // service has started (it would run beside the test's runs, woken by the service's commits).
  const fullConfig: DispatchConfig = { DISPATCH_SCHEDULER_POLL_MS: 3_600_000, DISPATCH_INLINE_FAN_OUT_MAX: 1000, DISPATCH_OUTBOX_BATCH: 1000, DISPATCH_TELEMETRY_TIMEOUT_MS: 2500, ...config };
  // A process of its own: a transport (whose memory a restart loses, as a process's) and the service.
  const boot = async () => {
    const transport = new InProcessTransport({ logger, retryBaseDelayMs: 5 });
    await transport.start();
    await transport.subscribe(DemandResponseEventsTopic, 'test-events', async ({ value }) => void events.push(value));
    await transport.subscribe(CommandsTopic, 'test-commands', async ({ value, meta }) => void commands.push({ key: meta.key, value }));
    const service = await createDispatchService({ logger, transport, db, config: fullConfig }, { clock: () => new Date(clock.now) });
    await service.start();
    await service.scheduler.stop();
    return { transport, service };
  };
  const first = await boot();
  const h: Harness = {
    database,
    db,
    transport: first.transport,
    service: first.service,
    clock,
    events,
    commands,
    async call(op, principal, req = {}) {
      const query = Object.fromEntries(Object.entries(req.query ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));
      const reply = await h.transport.request('dispatch', { op: op.name, principal, params: req.params ?? {}, query, body: req.body === undefined ? null : JSON.stringify(req.body) }, { timeoutMs: 20_000 });
      await h.settle();
      return { status: reply.status, body: reply.body === null ? null : JSON.parse(reply.body) };
    },
    async publish(kind, value, messageId) {
      const transport = h.transport;
      const opts = messageId ? { messageId } : {};
      if (kind === 'program') await transport.publish(ProgramsTopic, (value as ProgramMessage).id, value as ProgramMessage, opts);
      else if (kind === 'device') {
        const d = value as DeviceMessage;
        await transport.publish(DevicesTopic, deviceKey(d.integrator_id, d.site_id, d.id), d, opts);
      } else await transport.publish(EnrollmentsTopic, (value as EnrollmentMessage).id, value as EnrollmentMessage, opts);
      await h.settle();
    },
    async settle() {
      // Until nothing is left to publish after every consumer ran (a consumer may enqueue more).
      for (;;) {
        await h.transport.idle();
        await h.service.outbox.flush();
        await h.transport.idle();
        const [{ n }] = (await db.knex.withSchema(DISPATCH_SCHEMA).table('outbox').count({ n: '*' })) as [{ n: string | number }];
        if (Number(n) === 0) return;
      }
    },
    async restart() {
      await h.service.stop();
      await h.transport.stop();
      Object.assign(h, await boot());
    },
    async stop() {
      await h.service.stop();
      await h.transport.stop();
      await db.close();
      await database.drop();
    },
  };
  return h;
}

export { ProgramGroupsTopic };
