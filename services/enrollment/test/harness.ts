import { DevicesTopic, EnrollmentsTopic, ProgramsTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import type { DeviceMessage, EnrollmentMessage, OperationDef, Principal, ProgramMessage, SiteMessage } from '@efs/contracts';
import { CommissioningOperations } from '@efs/api';
import { migrateSchema, openDatabase, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { Errors } from '@efs/errors';
import { errorReply, InProcessTransport } from '@efs/messaging';
import { createTestDatabase, waitFor, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { ENROLLMENT_SCHEMA, createEnrollmentService, type EnrollmentService } from '../src/service.ts';

export * from './fixtures.ts';

export interface Harness {
  database: TestDatabase;
  db: Database;
  transport: InProcessTransport;
  service: EnrollmentService;
  /** The service's clock; tests move it. */
  clock: { now: number };
  /** What the fake commissioning answers getSite and listDevices with, by `<integrator>/<site>`. */
  commissioning: Map<string, { site: unknown; devices: unknown[] }>;
  commissioningCalls: string[];
  events: EnrollmentMessage[];
  call(op: OperationDef, principal: Principal, req?: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown }): Promise<{ status: number; body: any }>;
  /** Publishes and waits until the transport handled it. */
  publish(kind: 'site' | 'device' | 'program', value: SiteMessage | DeviceMessage | ProgramMessage, messageId?: string): Promise<void>;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The enrollment service alone on a fresh Postgres database, with the in-process transport, a
 * fake clock and a fake commissioning that answers getSite and listDevices.
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
    if (!known || (req.op !== CommissioningOperations.getSite.name && req.op !== CommissioningOperations.listDevices.name)) return errorReply(Errors.NOT_FOUND());
    return { status: 200, body: JSON.stringify(req.op === CommissioningOperations.getSite.name ? known.site : known.devices) };
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
        op.target,
        { op: op.name, principal, params: req.params ?? {}, query, body: req.body === undefined ? null : JSON.stringify(req.body) },
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
