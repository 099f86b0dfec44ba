import type { TargetTypeType } from '@efs/api';
import type { DeviceMessage, EnrollmentMessage, ProgramGroupMessage, ProgramMessage } from '@efs/contracts';
import { newestByKey, type Knex } from '@efs/db';
import type { TargetDevice } from '../domain/fanOut.ts';
import { distinctDevices, type ResolvedTarget, type TargetFacts } from '../domain/targets.ts';

/** What dispatch knows of a program. */
export interface ProgramView {
  id: string;
  utility_id: string;
  minimum_reserve_percentage: number;
}

/**
 * The read models targets resolve from, kept from the catalog, commissioning and enrollment
 * topics. Upserts are idempotent and never put an older version over a newer one (`updated_at`
 * decides), so redelivered or reordered messages change nothing.
 */
export interface ReadModelStore {
  upsertProgram(db: Knex, p: ProgramMessage): Promise<boolean>;
  /** True when written (new, or not older than what was kept). */
  upsertDevice(db: Knex, d: DeviceMessage): Promise<boolean>;
  /** Upserts several devices with one statement, as if each was upserted in the given order. */
  upsertDevices(db: Knex, devices: readonly DeviceMessage[]): Promise<void>;
  /** Writes the enrollment with its devices and groups when it is not older than what is kept. */
  upsertEnrollment(trx: Knex.Transaction, e: EnrollmentMessage): Promise<boolean>;
  upsertGroup(db: Knex, g: ProgramGroupMessage): Promise<boolean>;
  getProgram(db: Knex, id: string): Promise<ProgramView | undefined>;
  /** What the program knows of each target id (ids it does not know are absent). */
  targetFacts(db: Knex, programId: string, type: TargetTypeType, ids: readonly string[]): Promise<Map<string, TargetFacts>>;
  /** The devices with an ACTIVE enrollment in the program that the targets reach, each once (deleted devices excluded). */
  resolveDevices(db: Knex, programId: string, type: TargetTypeType, targets: readonly ResolvedTarget[]): Promise<TargetDevice[]>;
  /** The devices' own reserve levels, by device id, for devices of one site. */
  deviceLevels(db: Knex, integratorId: string, siteId: string, deviceIds: readonly string[]): Promise<Map<string, number | null>>;
  /** The highest minimum reserve of the programs the device is ACTIVE in, or null when none. */
  deviceMinimum(db: Knex, integratorId: string, siteId: string, deviceId: string): Promise<number | null>;
  /** Battery capacities of devices, by `<integrator>/<site>/<device>`. */
  capacities(db: Knex, keys: readonly { integrator_id: string; site_id: string; device_id: string }[]): Promise<Map<string, number | null>>;
}

const OPEN = ['PENDING', 'NEEDS_ACTION', 'ACTIVE'];
const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
/** The device read model's row of a device message. */
const deviceRow = (d: DeviceMessage): Record<string, unknown> => ({
  integrator_id: d.integrator_id,
  site_id: d.site_id,
  id: d.id,
  type: d.type,
  attributes: JSON.stringify(d.attributes),
  reserve_percentage: d.reserve_percentage,
  deleted: d.deleted,
  updated_at: d.updated_at,
});
/** A device as a map key: ids are free text (a '/' may be in them), Postgres text never holds NUL. */
export const deviceRef = (d: { integrator_id: string; site_id: string; device_id: string }) => `${d.integrator_id}\u0000${d.site_id}\u0000${d.device_id}`;

interface FactRow {
  target: string;
  integrator_id: string;
  status: string;
  live: boolean;
}

export class KnexReadModelStore implements ReadModelStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  private t(db: Knex, table: string) {
    return db.withSchema(this.schema).table(table);
  }

  async upsertProgram(db: Knex, p: ProgramMessage): Promise<boolean> {
    return this.upsert(db, 'programs', ['id'], { id: p.id, utility_id: p.utility_id, minimum_reserve_percentage: p.minimum_reserve_percentage, updated_at: p.updated_at });
  }

  async upsertDevice(db: Knex, d: DeviceMessage): Promise<boolean> {
    return this.upsert(db, 'devices', ['integrator_id', 'site_id', 'id'], deviceRow(d));
  }

  async upsertDevices(db: Knex, devices: readonly DeviceMessage[]): Promise<void> {
    const newest = newestByKey(devices, (d) => deviceRef({ integrator_id: d.integrator_id, site_id: d.site_id, device_id: d.id }), (d) => Date.parse(d.updated_at));
    if (newest.length > 0) await this.upsertQuery(db, 'devices', ['integrator_id', 'site_id', 'id'], newest.map(deviceRow));
  }

  async upsertEnrollment(trx: Knex.Transaction, e: EnrollmentMessage): Promise<boolean> {
    const written = await this.upsert(trx, 'enrollments', ['id'], {
      id: e.id,
      integrator_id: e.integrator_id,
      utility_id: e.utility_id,
      site_id: e.site_id,
      program_id: e.program_id,
      status: e.status,
      updated_at: e.updated_at,
    });
    if (!written) return false;
    await this.t(trx, 'enrollment_devices').where({ enrollment_id: e.id }).delete();
    await this.t(trx, 'enrollment_groups').where({ enrollment_id: e.id }).delete();
    const devices = [...new Set(e.device_ids)];
    if (devices.length > 0) {
      await this.t(trx, 'enrollment_devices').insert(
        devices.map((device_id) => ({ enrollment_id: e.id, program_id: e.program_id, integrator_id: e.integrator_id, site_id: e.site_id, device_id, status: e.status })),
      );
    }
    const groups = [...new Set(e.group_ids)];
    if (groups.length > 0) await this.t(trx, 'enrollment_groups').insert(groups.map((group_id) => ({ enrollment_id: e.id, program_id: e.program_id, group_id })));
    return true;
  }

  async upsertGroup(db: Knex, g: ProgramGroupMessage): Promise<boolean> {
    return this.upsert(db, 'program_groups', ['program_id', 'id'], { program_id: g.program_id, id: g.id, deleted: g.deleted, updated_at: g.updated_at });
  }

  async getProgram(db: Knex, id: string): Promise<ProgramView | undefined> {
    return (await this.t(db, 'programs').select('id', 'utility_id', 'minimum_reserve_percentage').where({ id }).first()) as ProgramView | undefined;
  }

  async targetFacts(db: Knex, programId: string, type: TargetTypeType, ids: readonly string[]): Promise<Map<string, TargetFacts>> {
    const facts = new Map<string, TargetFacts>();
    if (type === 'PROGRAM') {
      const [{ n }] = (await this.activeDevices(db, programId).count({ n: '*' })) as [{ n: string | number }];
      facts.set(programId, { id: programId, known: true, openIntegrators: [], activeIntegrators: [], activeDevices: Number(n) });
      return facts;
    }
    if (ids.length === 0) return facts;
    if (type === 'GROUP') {
      const known = (await this.t(db, 'program_groups').select('id').where({ program_id: programId, deleted: false }).whereIn('id', [...ids])) as { id: string }[];
      const members = (await this.activeDevices(db, programId)
        .join(`enrollment_groups as g`, 'g.enrollment_id', 'ed.enrollment_id')
        .whereIn('g.group_id', [...ids])
        .groupBy('g.group_id')
        .select('g.group_id as target', db.raw('count(*)::int as n'))) as { target: string; n: number }[];
      for (const k of known) facts.set(k.id, { id: k.id, known: true, openIntegrators: [], activeIntegrators: [], activeDevices: 0 });
      // A group an enrollment names is known even if its own announcement has not arrived yet.
      for (const m of members) facts.set(m.target, { id: m.target, known: true, openIntegrators: [], activeIntegrators: [], activeDevices: Number(m.n) });
      return facts;
    }
    const column = type === 'SITE' ? 'ed.site_id' : 'ed.device_id';
    const rows = (await this.t(db, 'enrollment_devices as ed')
      .leftJoin(`devices as d`, (j) => j.on('d.integrator_id', 'ed.integrator_id').andOn('d.site_id', 'ed.site_id').andOn('d.id', 'ed.device_id'))
      .where('ed.program_id', programId)
      .whereIn(column, [...ids])
      .select(`${column} as target`, 'ed.integrator_id', 'ed.status', db.raw('not coalesce(d.deleted, false) as live'))) as FactRow[];
    for (const r of rows) {
      const f = facts.get(r.target) ?? { id: r.target, known: true, openIntegrators: [] as string[], activeIntegrators: [] as string[], activeDevices: 0 };
      const open = f.openIntegrators as string[];
      const active = f.activeIntegrators as string[];
      if (OPEN.includes(r.status) && r.live && !open.includes(r.integrator_id)) open.push(r.integrator_id);
      if (r.status === 'ACTIVE' && r.live) {
        if (!active.includes(r.integrator_id)) active.push(r.integrator_id);
        f.activeDevices++;
      }
      facts.set(r.target, f);
    }
    return facts;
  }

  async resolveDevices(db: Knex, programId: string, type: TargetTypeType, targets: readonly ResolvedTarget[]): Promise<TargetDevice[]> {
    const q = this.activeDevices(db, programId).select('ed.integrator_id', 'ed.site_id', 'ed.device_id', 'd.type', 'd.attributes', 'd.reserve_percentage');
    if (type === 'GROUP') {
      q.whereExists((sub) =>
        sub
          .select(db.raw('1'))
          .withSchema(this.schema).from('enrollment_groups as g')
          .whereRaw('g.enrollment_id = ed.enrollment_id')
          .whereIn('g.group_id', targets.map((t) => t.id)),
      );
    } else if (type === 'SITE' || type === 'DEVICE') {
      const column = type === 'SITE' ? 'ed.site_id' : 'ed.device_id';
      // Each id counts only for the one integrator it resolved to when the event was created.
      q.whereIn(['ed.integrator_id', column], targets.map((t) => [t.integrator_id ?? '', t.id]));
    }
    const rows = (await q) as (Omit<TargetDevice, 'attributes'> & { attributes: TargetDevice['attributes'] | string | null })[];
    return distinctDevices(rows).map((r) => ({ ...r, attributes: r.attributes === null ? null : json(r.attributes) }));
  }

  async deviceLevels(db: Knex, integratorId: string, siteId: string, deviceIds: readonly string[]): Promise<Map<string, number | null>> {
    if (deviceIds.length === 0) return new Map();
    const rows = (await this.t(db, 'devices').select('id', 'reserve_percentage').where({ integrator_id: integratorId, site_id: siteId }).whereIn('id', [...deviceIds])) as { id: string; reserve_percentage: number | null }[];
    return new Map(rows.map((r) => [r.id, r.reserve_percentage]));
  }

  async deviceMinimum(db: Knex, integratorId: string, siteId: string, deviceId: string): Promise<number | null> {
    const row = (await this.t(db, 'enrollment_devices as ed')
      .join('programs as p', 'p.id', 'ed.program_id')
      .where({ 'ed.integrator_id': integratorId, 'ed.site_id': siteId, 'ed.device_id': deviceId, 'ed.status': 'ACTIVE' })
      .max({ minimum: 'p.minimum_reserve_percentage' })
      .first()) as { minimum: number | null } | undefined;
    return row?.minimum ?? null;
  }

  async capacities(db: Knex, keys: readonly { integrator_id: string; site_id: string; device_id: string }[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>();
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const rows = (await this.t(db, 'devices')
        .select('integrator_id', 'site_id', 'id', db.raw(`(attributes->>'battery_capacity_wh')::bigint as capacity`))
        .whereIn(['integrator_id', 'site_id', 'id'], chunk.map((k) => [k.integrator_id, k.site_id, k.device_id]))) as { integrator_id: string; site_id: string; id: string; capacity: string | number | null }[];
      for (const r of rows) out.set(deviceRef({ integrator_id: r.integrator_id, site_id: r.site_id, device_id: r.id }), r.capacity === null ? null : Number(r.capacity));
    }
    return out;
  }

  /** Devices of the program's ACTIVE enrollments that are not deleted (a device not yet seen counts). */
  private activeDevices(db: Knex, programId: string) {
    return this.t(db, 'enrollment_devices as ed')
      .leftJoin(`devices as d`, (j) => j.on('d.integrator_id', 'ed.integrator_id').andOn('d.site_id', 'ed.site_id').andOn('d.id', 'ed.device_id'))
      .where({ 'ed.program_id': programId, 'ed.status': 'ACTIVE' })
      .where((w) => w.whereNull('d.deleted').orWhere('d.deleted', false));
  }

  /** Insert, or overwrite when the incoming version is not older than the kept one. */
  private async upsert(db: Knex, table: string, key: string[], row: Record<string, unknown>): Promise<boolean> {
    const written = await this.upsertQuery(db, table, key, row).returning(key[0]!);
    return written.length > 0;
  }

  /** Insert, or overwrite when the incoming version is not older than the kept one (rows of distinct keys). */
  private upsertQuery(db: Knex, table: string, key: string[], rows: Record<string, unknown> | Record<string, unknown>[]) {
    return this.t(db, table).insert(rows).onConflict(key).merge().where(`${table}.updated_at`, '<=', db.raw('excluded.updated_at'));
  }
}
