import { omit } from '@efs/contracts';
import { isUniqueViolation, rowMapping, type Knex } from '@efs/db';
import type { EnrollmentStatusType } from '@efs/api';
import { StoredEnrollmentFields, type Enrollment } from '../domain/enrollment.ts';
import { isTerminal, type TriggerType } from '../domain/lifecycle.ts';

/** Who changed an enrollment, for its history. */
export interface Actor {
  kind: 'USER' | 'INTEGRATOR' | 'UTILITY' | 'SYSTEM';
  /** Site id for a user, integrator id, utility id, or the component for the system. */
  id: string | null;
}

export interface HistoryEntry {
  enrollment_id: string;
  from_status: EnrollmentStatusType | null;
  to_status: EnrollmentStatusType;
  trigger: TriggerType | 'CREATE';
  actor: Actor;
  reason: string | null;
  at: Date;
}

export interface EnrollmentFilter {
  programId?: string | undefined;
  /** Only these statuses; every status when absent. */
  statuses?: readonly EnrollmentStatusType[] | undefined;
  skip: number;
  limit: number;
}

export interface LockOptions {
  /** Lock the row until the transaction ends (a transition is decided on what is locked). */
  forUpdate?: boolean;
}

/** A device that is already in an open (PENDING, NEEDS_ACTION or ACTIVE) enrollment of the program. */
export class DeviceAlreadyEnrolledError extends Error {
  override name = 'DeviceAlreadyEnrolledError';
}

/** Persistence of enrollments, their devices and their status history. */
export interface EnrollmentStore {
  /** Inserts an enrollment with its devices; DeviceAlreadyEnrolledError when a device is held already. */
  insert(trx: Knex.Transaction, e: Enrollment): Promise<void>;
  /** Writes the devices and lifecycle fields; frees the devices it no longer holds, all of them when the status is terminal. */
  update(trx: Knex.Transaction, e: Enrollment): Promise<void>;
  recordHistory(trx: Knex.Transaction, entry: HistoryEntry): Promise<void>;
  history(db: Knex, enrollmentId: string): Promise<HistoryEntry[]>;
  /** Open enrollments of the program that hold any of the devices, with the devices they hold. */
  openHolding(db: Knex, integratorId: string, siteId: string, programId: string, deviceIds: readonly string[]): Promise<{ enrollment_id: string; device_id: string }[]>;
  findForSite(db: Knex, integratorId: string, siteId: string, id: string, lock?: LockOptions): Promise<Enrollment | undefined>;
  findForUtility(db: Knex, utilityId: string, id: string, lock?: LockOptions): Promise<Enrollment | undefined>;
  findById(db: Knex, id: string, lock?: LockOptions): Promise<Enrollment | undefined>;
  listForSite(db: Knex, integratorId: string, siteId: string, filter: EnrollmentFilter): Promise<Enrollment[]>;
  listForUtility(db: Knex, utilityId: string, filter: EnrollmentFilter): Promise<Enrollment[]>;
  /** When the next sandbox approval falls due (one index lookup, no lock; null when none will): the auto-approver's idle read. */
  nextAutoApprovalAt(db: Knex): Promise<Date | null>;
  /** PENDING enrollments whose sandbox approval is due, locked; rows another replica holds are skipped. */
  lockDueForAutoApproval(trx: Knex.Transaction, now: Date, limit: number): Promise<Enrollment[]>;
  /** Open enrollments holding the device, locked. */
  lockOpenHoldingDevice(trx: Knex.Transaction, integratorId: string, siteId: string, deviceId: string): Promise<Enrollment[]>;
  /** Whether a site has a NEEDS_ACTION enrollment sent back before its `before` (no lock): the cheap check of a batch of site changes. */
  waitingForInfo(db: Knex, sites: readonly InfoProvided[]): Promise<boolean>;
  /** NEEDS_ACTION enrollments of the sites that were sent back before the site's `before`, locked, oldest first. */
  lockWaitingForInfo(trx: Knex.Transaction, sites: readonly InfoProvided[]): Promise<Enrollment[]>;
  /** Replaces the enrollment's groups (ids of groups of its program). */
  setGroups(trx: Knex.Transaction, e: Enrollment, groupIds: readonly string[]): Promise<void>;
}

/** A site whose information arrived at `before` (a site update, a supplement). */
export interface InfoProvided {
  integratorId: string;
  siteId: string;
  before: Date;
}

interface HistoryRow {
  enrollment_id: string;
  from_status: EnrollmentStatusType | null;
  to_status: EnrollmentStatusType;
  trigger: HistoryEntry['trigger'];
  actor_kind: Actor['kind'];
  actor_id: string | null;
  reason: string | null;
  at: Date | string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Row = Record<string, unknown>;
const enrollmentRows = rowMapping(StoredEnrollmentFields);
/** The enrollments table: every kept field but the groups, which have their own table. */
const enrollmentColumns = rowMapping(omit(StoredEnrollmentFields, ['group_ids']));

export class KnexEnrollmentStore implements EnrollmentStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  async insert(trx: Knex.Transaction, e: Enrollment): Promise<void> {
    await trx.withSchema(this.schema).table('enrollments').insert(enrollmentColumns.toRow(e));
    // Sorted, so that two transactions racing for the same devices take them in the same order.
    const rows = [...e.device_ids].sort().map((device_id) => ({
      enrollment_id: e.id,
      integrator_id: e.integrator_id,
      site_id: e.site_id,
      device_id,
      program_id: e.program_id,
      released_at: isTerminal(e.status) ? e.updated_at : null,
    }));
    try {
      await trx.withSchema(this.schema).table('enrollment_devices').insert(rows);
    } catch (err) {
      if (isUniqueViolation(err, 'enrollment_devices_one_open')) throw new DeviceAlreadyEnrolledError('a device is already enrolled in this program', { cause: err });
      throw err;
    }
  }

  async update(trx: Knex.Transaction, e: Enrollment): Promise<void> {
    await trx.withSchema(this.schema).table('enrollments').where({ id: e.id }).update({
      device_ids: JSON.stringify(e.device_ids),
      status: e.status,
      status_reason: e.status_reason,
      enrolled_at: e.enrolled_at,
      unenrolled_at: e.unenrolled_at,
      auto_approve_at: e.auto_approve_at,
      status_changed_at: e.status_changed_at,
      updated_at: e.updated_at,
    });
    const released = trx.withSchema(this.schema).table('enrollment_devices').where({ enrollment_id: e.id }).whereNull('released_at');
    if (!isTerminal(e.status)) released.whereNotIn('device_id', e.device_ids);
    await released.update({ released_at: e.updated_at });
  }

  async recordHistory(trx: Knex.Transaction, h: HistoryEntry): Promise<void> {
    await trx.withSchema(this.schema).table('enrollment_history').insert({
      enrollment_id: h.enrollment_id,
      from_status: h.from_status,
      to_status: h.to_status,
      trigger: h.trigger,
      actor_kind: h.actor.kind,
      actor_id: h.actor.id,
      reason: h.reason,
      at: h.at,
    });
  }

  async history(db: Knex, enrollmentId: string): Promise<HistoryEntry[]> {
    if (!UUID.test(enrollmentId)) return [];
    const rows = (await db.withSchema(this.schema).table('enrollment_history').where({ enrollment_id: enrollmentId }).orderBy('id')) as HistoryRow[];
    return rows.map((r) => ({
      enrollment_id: r.enrollment_id,
      from_status: r.from_status,
      to_status: r.to_status,
      trigger: r.trigger,
      actor: { kind: r.actor_kind, id: r.actor_id },
      reason: r.reason,
      at: new Date(r.at),
    }));
  }

  async openHolding(db: Knex, integratorId: string, siteId: string, programId: string, deviceIds: readonly string[]): Promise<{ enrollment_id: string; device_id: string }[]> {
    if (deviceIds.length === 0) return [];
    return (await db
      .withSchema(this.schema)
      .table('enrollment_devices')
      .select('enrollment_id', 'device_id')
      .where({ integrator_id: integratorId, site_id: siteId, program_id: programId })
      .whereIn('device_id', [...deviceIds])
      .whereNull('released_at')
      .orderBy('device_id')) as { enrollment_id: string; device_id: string }[];
  }

  async findForSite(db: Knex, integratorId: string, siteId: string, id: string, lock: LockOptions = {}): Promise<Enrollment | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.one(this.select(db).where({ 'e.id': id, 'e.integrator_id': integratorId, 'e.site_id': siteId }), lock);
  }

  async findForUtility(db: Knex, utilityId: string, id: string, lock: LockOptions = {}): Promise<Enrollment | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.one(this.select(db).where({ 'e.id': id, 'e.utility_id': utilityId }), lock);
  }

  async findById(db: Knex, id: string, lock: LockOptions = {}): Promise<Enrollment | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.one(this.select(db).where({ 'e.id': id }), lock);
  }

  async listForSite(db: Knex, integratorId: string, siteId: string, f: EnrollmentFilter): Promise<Enrollment[]> {
    return this.list(this.select(db).where({ 'e.integrator_id': integratorId, 'e.site_id': siteId }), f);
  }

  async listForUtility(db: Knex, utilityId: string, f: EnrollmentFilter): Promise<Enrollment[]> {
    return this.list(this.select(db).where({ 'e.utility_id': utilityId }), f);
  }

  async nextAutoApprovalAt(db: Knex): Promise<Date | null> {
    // The partial index enrollments_auto_approve answers the minimum from its first entry.
    const row = (await db.withSchema(this.schema).table('enrollments').where('status', 'PENDING').whereNotNull('auto_approve_at').min({ at: 'auto_approve_at' }).first()) as { at: Date | string | null } | undefined;
    return row?.at === null || row?.at === undefined ? null : new Date(row.at);
  }

  async lockDueForAutoApproval(trx: Knex.Transaction, now: Date, limit: number): Promise<Enrollment[]> {
    const rows = (await this.select(trx)
      .where('e.status', 'PENDING')
      .whereNotNull('e.auto_approve_at')
      .where('e.auto_approve_at', '<=', now)
      .orderBy('e.auto_approve_at')
      .limit(limit)
      .forUpdate('e')
      .skipLocked()) as Row[];
    return rows.map((r) => enrollmentRows.fromRow(r));
  }

  async lockOpenHoldingDevice(trx: Knex.Transaction, integratorId: string, siteId: string, deviceId: string): Promise<Enrollment[]> {
    const holding = trx
      .withSchema(this.schema)
      .table('enrollment_devices as d')
      .select('d.enrollment_id')
      .where({ 'd.integrator_id': integratorId, 'd.site_id': siteId, 'd.device_id': deviceId })
      .whereNull('d.released_at');
    const rows = (await this.select(trx).whereIn('e.id', holding).orderBy([{ column: 'e.created_at' }, { column: 'e.id' }]).forUpdate('e')) as Row[];
    return rows.map((r) => enrollmentRows.fromRow(r));
  }

  async waitingForInfo(db: Knex, sites: readonly InfoProvided[]): Promise<boolean> {
    if (sites.length === 0) return false;
    return (await this.waiting(db.withSchema(this.schema).table('enrollments as e'), sites).first('e.id')) !== undefined;
  }

  async lockWaitingForInfo(trx: Knex.Transaction, sites: readonly InfoProvided[]): Promise<Enrollment[]> {
    if (sites.length === 0) return [];
    const rows = (await this.waiting(this.select(trx), sites)
      .orderBy([{ column: 'e.created_at' }, { column: 'e.id' }])
      .forUpdate('e')) as Row[];
    return rows.map((r) => enrollmentRows.fromRow(r));
  }

  /** NEEDS_ACTION rows of `e` sent back before their site's information arrived. */
  private waiting(q: Knex.QueryBuilder, sites: readonly InfoProvided[]): Knex.QueryBuilder {
    return q.where('e.status', 'NEEDS_ACTION').where((any) => {
      for (const s of sites) any.orWhere((w) => w.where({ 'e.integrator_id': s.integratorId, 'e.site_id': s.siteId }).where('e.status_changed_at', '<', s.before));
    });
  }

  async setGroups(trx: Knex.Transaction, e: Enrollment, groupIds: readonly string[]): Promise<void> {
    await trx.withSchema(this.schema).table('enrollment_groups').where({ enrollment_id: e.id }).delete();
    const unique = [...new Set(groupIds)];
    if (unique.length > 0) {
      await trx.withSchema(this.schema).table('enrollment_groups').insert(unique.map((group_id) => ({ enrollment_id: e.id, program_id: e.program_id, group_id })));
    }
  }

  private select(db: Knex) {
    const groups = db
      .withSchema(this.schema)
      .table('enrollment_groups as g')
      .select(db.raw(`coalesce(jsonb_agg(g.group_id order by g.group_id), '[]'::jsonb)`))
      .whereRaw('g.enrollment_id = e.id');
    return db.withSchema(this.schema).table('enrollments as e').select('e.*', groups.as('group_ids'));
  }

  private async one(q: Knex.QueryBuilder, lock: LockOptions): Promise<Enrollment | undefined> {
    if (lock.forUpdate) q.forUpdate('e');
    const r = (await q.first()) as Row | undefined;
    return r ? enrollmentRows.fromRow(r) : undefined;
  }

  private async list(q: Knex.QueryBuilder, f: EnrollmentFilter): Promise<Enrollment[]> {
    if (f.programId !== undefined) q.where('e.program_id', f.programId);
    if (f.statuses !== undefined) q.whereIn('e.status', [...f.statuses]);
    const rows = (await q.orderBy([{ column: 'e.created_at' }, { column: 'e.id' }]).offset(f.skip).limit(f.limit)) as Row[];
    return rows.map((r) => enrollmentRows.fromRow(r));
  }
}
