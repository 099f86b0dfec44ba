import { newestByKey, rowMapping, type Knex } from '@efs/db';
import type { ProgramMessage, SiteMessage, WireOf } from '@efs/contracts';
import { DeviceViewFields, ProgramViewFields, SiteViewFields, type DeviceView, type ProgramView, type SiteView } from '../domain/readModels.ts';

/**
 * The read models of sites, devices and programs. Upserts are idempotent and never put an older
 * version over a newer one (`updated_at` decides), so redelivered or reordered messages and
 * read-through answers can arrive in any order.
 */
export interface ReadModelStore {
  /** True when the row was written (new, or not older than what was kept). */
  upsertSite(db: Knex, site: SiteInput): Promise<boolean>;
  upsertDevice(db: Knex, device: DeviceInput): Promise<boolean>;
  /** Upserts several sites with one statement, as if each was upserted in the given order. */
  upsertSites(db: Knex, sites: readonly SiteInput[]): Promise<void>;
  /** Upserts several devices with one statement, as if each was upserted in the given order. */
  upsertDevices(db: Knex, devices: readonly DeviceInput[]): Promise<void>;
  upsertProgram(db: Knex, program: ProgramMessage): Promise<boolean>;
  /** The site, unless unknown or deleted. */
  getSite(db: Knex, integratorId: string, siteId: string): Promise<SiteView | undefined>;
  /** The named devices that exist (not deleted) at the site. */
  getDevices(db: Knex, integratorId: string, siteId: string, ids: readonly string[]): Promise<DeviceView[]>;
  getProgram(db: Knex, id: string): Promise<ProgramView | undefined>;
}

/** What the site read model keeps of a site message (or of a read-through answer). */
export type SiteInput = SiteMessage;
/** What the device read model keeps of a device message. */
export type DeviceInput = WireOf<typeof DeviceViewFields>;

type Row = Record<string, unknown>;
const siteRows = rowMapping(SiteViewFields);
const deviceRows = rowMapping(DeviceViewFields);
const programRows = rowMapping(ProgramViewFields);

export class KnexReadModelStore implements ReadModelStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  async upsertSite(db: Knex, s: SiteInput): Promise<boolean> {
    return this.upsert(db, 'sites', ['integrator_id', 'id'], siteRows.toRow(s));
  }

  async upsertDevice(db: Knex, d: DeviceInput): Promise<boolean> {
    return this.upsert(db, 'devices', ['integrator_id', 'site_id', 'id'], deviceRows.toRow(d));
  }

  async upsertSites(db: Knex, sites: readonly SiteInput[]): Promise<void> {
    const newest = newestByKey(sites, (s) => `${s.integrator_id}\u0000${s.id}`, (s) => Date.parse(s.updated_at));
    await this.upsertMany(db, 'sites', ['integrator_id', 'id'], newest.map((s) => siteRows.toRow(s)));
  }

  async upsertDevices(db: Knex, devices: readonly DeviceInput[]): Promise<void> {
    const newest = newestByKey(devices, (d) => `${d.integrator_id}\u0000${d.site_id}\u0000${d.id}`, (d) => Date.parse(d.updated_at));
    await this.upsertMany(db, 'devices', ['integrator_id', 'site_id', 'id'], newest.map((d) => deviceRows.toRow(d)));
  }

  async upsertProgram(db: Knex, p: ProgramMessage): Promise<boolean> {
    return this.upsert(db, 'programs', ['id'], programRows.toRow(p));
  }

  async getSite(db: Knex, integratorId: string, siteId: string): Promise<SiteView | undefined> {
    const r = (await db.withSchema(this.schema).table('sites').where({ integrator_id: integratorId, id: siteId, deleted: false }).first()) as Row | undefined;
    return r ? siteRows.fromRow(r) : undefined;
  }

  async getDevices(db: Knex, integratorId: string, siteId: string, ids: readonly string[]): Promise<DeviceView[]> {
    if (ids.length === 0) return [];
    const rows = (await db
      .withSchema(this.schema)
      .table('devices')
      .where({ integrator_id: integratorId, site_id: siteId, deleted: false })
      .whereIn('id', [...ids])) as Row[];
    return rows.map((r) => deviceRows.fromRow(r));
  }

  async getProgram(db: Knex, id: string): Promise<ProgramView | undefined> {
    const r = (await db.withSchema(this.schema).table('programs').where({ id }).first()) as Row | undefined;
    return r ? programRows.fromRow(r) : undefined;
  }

  /** Insert, or overwrite when the incoming version is not older than the kept one. */
  private async upsert(db: Knex, table: string, key: string[], row: Record<string, unknown>): Promise<boolean> {
    const written = await this.upsertQuery(db, table, key, row).returning(key[0]!);
    return written.length > 0;
  }

  /** The same for rows of distinct keys, in one statement. */
  private async upsertMany(db: Knex, table: string, key: string[], rows: Record<string, unknown>[]): Promise<void> {
    if (rows.length > 0) await this.upsertQuery(db, table, key, rows);
  }

  private upsertQuery(db: Knex, table: string, key: string[], rows: Record<string, unknown> | Record<string, unknown>[]) {
    return db.withSchema(this.schema).table(table).insert(rows).onConflict(key).merge().where(`${table}.updated_at`, '<=', db.raw('excluded.updated_at'));
  }
}
