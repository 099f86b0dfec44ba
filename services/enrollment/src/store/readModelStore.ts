import type { Knex } from '@efs/db';
import type { DeviceMessage, ProgramMessage, SiteMessage } from '@efs/contracts';
import type { DeviceView, ProgramView, SiteView } from '../domain/readModels.ts';

/**
 * The read models of sites, devices and programs. Upserts are idempotent and never put an older
 * version over a newer one (`updated_at` decides), so redelivered or reordered messages and
 * read-through answers can arrive in any order.
 */
export interface ReadModelStore {
  /** True when the row was written (new, or not older than what was kept). */
  upsertSite(db: Knex, site: SiteInput): Promise<boolean>;
  upsertDevice(db: Knex, device: DeviceInput): Promise<boolean>;
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
export type DeviceInput = Pick<DeviceMessage, 'integrator_id' | 'site_id' | 'id' | 'type' | 'updated_at' | 'deleted'>;

const SITE_FIELDS = ['first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2', 'service_account_id'] as const;

type SiteRow = Omit<SiteView, 'created_at' | 'updated_at'> & { created_at: Date | string; updated_at: Date | string };
type DeviceRow = Omit<DeviceView, 'updated_at'> & { updated_at: Date | string };
interface ProgramRow {
  id: string;
  utility_id: string;
  name: string;
  eligible_device_types: ProgramView['eligible_device_types'] | string;
  zip_codes: string[] | string;
  can_auto_enroll: boolean;
  minimum_commitment_months: number | null;
  enrollment_form: ProgramView['enrollment_form'] | string;
  terms_and_conditions_version: string | null;
  auto_approve_after_ms: string | number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

export class KnexReadModelStore implements ReadModelStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  async upsertSite(db: Knex, s: SiteInput): Promise<boolean> {
    const row: Record<string, unknown> = { integrator_id: s.integrator_id, id: s.id, created_at: s.created_at, updated_at: s.updated_at, deleted: s.deleted };
    for (const f of SITE_FIELDS) row[f] = s[f];
    return this.upsert(db, 'sites', ['integrator_id', 'id'], row);
  }

  async upsertDevice(db: Knex, d: DeviceInput): Promise<boolean> {
    return this.upsert(db, 'devices', ['integrator_id', 'site_id', 'id'], {
      integrator_id: d.integrator_id,
      site_id: d.site_id,
      id: d.id,
      type: d.type,
      updated_at: d.updated_at,
      deleted: d.deleted,
    });
  }

  async upsertProgram(db: Knex, p: ProgramMessage): Promise<boolean> {
    return this.upsert(db, 'programs', ['id'], {
      id: p.id,
      utility_id: p.utility_id,
      name: p.name,
      eligible_device_types: JSON.stringify(p.eligible_device_types),
      zip_codes: JSON.stringify(p.zip_codes),
      can_auto_enroll: p.can_auto_enroll,
      minimum_commitment_months: p.minimum_commitment_months,
      enrollment_form: JSON.stringify(p.enrollment_form),
      terms_and_conditions_version: p.terms_and_conditions_version,
      auto_approve_after_ms: p.auto_approve_after_ms,
      created_at: p.created_at,
      updated_at: p.updated_at,
    });
  }

  async getSite(db: Knex, integratorId: string, siteId: string): Promise<SiteView | undefined> {
    const r = (await db.withSchema(this.schema).table('sites').where({ integrator_id: integratorId, id: siteId, deleted: false }).first()) as SiteRow | undefined;
    return r ? { ...r, created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) } : undefined;
  }

  async getDevices(db: Knex, integratorId: string, siteId: string, ids: readonly string[]): Promise<DeviceView[]> {
    if (ids.length === 0) return [];
    const rows = (await db
      .withSchema(this.schema)
      .table('devices')
      .where({ integrator_id: integratorId, site_id: siteId, deleted: false })
      .whereIn('id', [...ids])) as DeviceRow[];
    return rows.map((r) => ({ integrator_id: r.integrator_id, site_id: r.site_id, id: r.id, type: r.type, updated_at: new Date(r.updated_at), deleted: r.deleted }));
  }

  async getProgram(db: Knex, id: string): Promise<ProgramView | undefined> {
    const r = (await db.withSchema(this.schema).table('programs').where({ id }).first()) as ProgramRow | undefined;
    if (!r) return undefined;
    return {
      id: r.id,
      utility_id: r.utility_id,
      name: r.name,
      eligible_device_types: json(r.eligible_device_types),
      zip_codes: json(r.zip_codes),
      can_auto_enroll: r.can_auto_enroll,
      minimum_commitment_months: r.minimum_commitment_months,
      enrollment_form: json(r.enrollment_form),
      terms_and_conditions_version: r.terms_and_conditions_version,
      auto_approve_after_ms: r.auto_approve_after_ms === null ? null : Number(r.auto_approve_after_ms),
      created_at: new Date(r.created_at),
      updated_at: new Date(r.updated_at),
    };
  }

  /** Insert, or overwrite when the incoming version is not older than the kept one. */
  private async upsert(db: Knex, table: string, key: string[], row: Record<string, unknown>): Promise<boolean> {
    const written = await db
      .withSchema(this.schema)
      .table(table)
      .insert(row)
      .onConflict(key)
      .merge()
      .where(`${table}.updated_at`, '<=', db.raw('excluded.updated_at'))
      .returning(key[0]!);
    return written.length > 0;
  }
}
