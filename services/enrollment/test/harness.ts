import { randomUUID } from 'node:crypto';
import { DevicesTopic, EnrollmentsTopic, ProgramsTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import type { DeviceMessage, EnrollmentMessage, Principal, ProgramMessage, SiteMessage } from '@efs/contracts';
import { migrateSchema, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { createTestDatabase, waitFor, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { ENROLLMENT_SCHEMA, createEnrollmentService, type EnrollmentService } from '../src/service.ts';

export const INTEGRATOR = 'integrator-a';
export const UTILITY = 'utility-1';

export const sitePrincipal = (siteId: string, integratorId = INTEGRATOR): Principal => ({ kind: 'SITE', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: 't' });
export const utilityPrincipal = (utilityId = UTILITY): Principal => ({ kind: 'UTILITY', integrator_id: null, utility_id: utilityId, site_id: null, token_id: 'k' });
export const systemPrincipal = (integratorId = INTEGRATOR): Principal => ({ kind: 'SYSTEM', integrator_id: integratorId, utility_id: null, site_id: null, token_id: null });

export function siteMessage(id: string, over: Partial<SiteMessage> = {}): SiteMessage {
  return {
    integrator_id: INTEGRATOR,
    id,
    first_name: 'Ada',
    last_name: 'Lovelace',
    company_name: null,
    email: 'ada@example.com',
    state_code: 'CA',
    city: 'Fresno',
    zip_code: '88801',
    street_address: '1 Main St',
    street_address2: null,
    service_account_id: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    deleted: false,
    ...over,
  };
}

export function deviceMessage(siteId: string, id: string, over: Partial<DeviceMessage> = {}): DeviceMessage {
  return {
    integrator_id: INTEGRATOR,
    site_id: siteId,
    id,
    manufacturer_name: 'Acme',
    product_name: 'PowerBox',
    serial_number: `sn-${id}`,
    type: 'BATTERY',
    attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
    reserve_percentage: 20,
    install_date: '2025-12-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    deleted: false,
    ...over,
  };
}

export function programMessage(over: Partial<ProgramMessage> = {}): ProgramMessage {
  return {
    id: randomUUID(),
    utility_id: UTILITY,
    name: 'Capacity',
    description: 'A program',
    eligible_device_types: ['BATTERY'],
    zip_codes: ['88800', '88801'],
    can_auto_enroll: false,
    minimum_reserve_percentage: 20,
    minimum_commitment_months: null,
    participation_months: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    rates: { upfront_per_kwh: 1, upfront_per_device: 0, yearly_per_kw: 1, yearly_per_device: 0 },
    enrollment_form: [],
    terms_and_conditions_version: null,
    terms_and_conditions_text: null,
    auto_approve_after_ms: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

export interface Harness {
  database: TestDatabase;
  db: Database;
  transport: InProcessTransport;
  service: EnrollmentService;
  /** The service's clock; tests move it. */
  clock: { now: number };
  /** What the fake commissioning answers `sites.get` and `devices.list` with, by `<integrator>/<site>`. */
  commissioning: Map<string, { site: unknown; devices: unknown[] }>;
  commissioningCalls: string[];
  events: EnrollmentMessage[];
  call(op: string, principal: Principal, req?: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown }): Promise<{ status: number; body: any }>;
  /** Publishes and waits until the transport handled it. */
  publish(kind: 'site' | 'device' | 'program', value: SiteMessage | DeviceMessage | ProgramMessage, messageId?: string): Promise<void>;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The enrollment service alone on a fresh Postgres database, with the in-process transport, a
 * fake clock and a fake commissioning that answers `sites.get`.
 */
export async function startHarness(): Promise<Harness> {
  const logger = createLogger({ name: 'enrollment-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const database = await createTestDatabase();
  const db = await openDatabase({ url: database.url, dataDir: '', logger, poolMax: 20 });
  await migrateSchema(db.knex, ENROLLMENT_SCHEMA, migrations);
  const transport = new InProcessTransport({ logger, retryBaseDelayMs: 5 });
  await transport.start();
  const clock = { now: Date.parse('2026-03-01T00:00:00.000Z') };
  const commissioning = new Map<string, { site: unknown; devices: unknown[] }>();
  const commissioningCalls: string[] = [];
  await transport.serve('commissioning', async (req) => {
    commissioningCalls.push(`${req.op} ${req.principal.kind} ${req.principal.integrator_id} ${req.params.siteId}`);
    const known = commissioning.get(`${req.principal.integrator_id}/${req.params.siteId}`);
    if (!known || (req.op !== 'sites.get' && req.op !== 'devices.list')) return { status: 404, body: JSON.stringify({ code: 'NOT_FOUND', message: 'Not found', status_code: 404, detail: [], errors: [] }) };
    return { status: 200, body: JSON.stringify(req.op === 'sites.get' ? known.site : known.devices) };
  });
  const events: EnrollmentMessage[] = [];
  await transport.subscribe(EnrollmentsTopic, 'test-enrollments', async ({ value }) => {
    events.push(value);
  });
  const service = await createEnrollmentService(
    { logger, transport, db, config: { ENROLLMENT_AUTO_APPROVE_POLL_MS: 20, ENROLLMENT_COMMISSIONING_TIMEOUT_MS: 1000 } },
    { clock: () => new Date(clock.now) },
  );
  await service.start();
  return {
    database,
    db,
    transport,
    service,
    clock,
    commissioning,
    commissioningCalls,
    events,
    async call(op, principal, req = {}) {
      const query = Object.fromEntries(Object.entries(req.query ?? {}).map(([k, v]) => [k, [v]]));
      const reply = await transport.request(
        'enrollment',
        { op, principal, params: req.params ?? {}, query, body: req.body === undefined ? null : JSON.stringify(req.body) },
        { timeoutMs: 10_000 },
      );
      return { status: reply.status, body: reply.body === null ? null : JSON.parse(reply.body) };
    },
    async publish(kind, value, messageId) {
      const topic = kind === 'site' ? SitesTopic : kind === 'device' ? DevicesTopic : ProgramsTopic;
      const key = kind === 'program' ? (value as ProgramMessage).id : kind === 'site' ? `${(value as SiteMessage).integrator_id}/${(value as SiteMessage).id}` : `${(value as DeviceMessage).integrator_id}/${(value as DeviceMessage).site_id}/${(value as DeviceMessage).id}`;
      await transport.publish(topic as typeof SitesTopic, key, value as SiteMessage, messageId ? { messageId } : {});
      await transport.idle();
    },
    idle: () => transport.idle(),
    async stop() {
      await service.stop();
      await transport.stop();
      await db.close();
      await database.drop();
    },
  };
}

export { SupplementsTopic, waitFor };
