import { json, newestByKey, type Knex } from '@efs/db';
import type { DeviceTypeType } from '@efs/api';

export interface SiteView {
  integrator_id: string;
  site_id: string;
  zip_code: string | null;
  deleted: boolean;
  created_at: Date | null;
  updated_at: Date;
}

export interface DeviceView {
  integrator_id: string;
  device_id: string;
  site_id: string;
  type: DeviceTypeType;
  attributes: Record<string, number>;
  deleted: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * The catalog's read model of sites and devices; upserts keep the newest state by `updated_at`
 * (a later state with the same `updated_at` replaces an earlier one, as applying them in turn does).
 */
export interface SiteViewStore {
  /** Upserts several sites with one statement, as if each was upserted in the given order. */
  upsertSites(views: readonly SiteView[]): Promise<void>;
  /** Upserts several devices with one statement, as if each was upserted in the given order. */
  upsertDevices(views: readonly DeviceView[]): Promise<void>;
  getSite(integratorId: string, siteId: string): Promise<SiteView | undefined>;
  /** The site's devices that are not removed, oldest first. */
  listDevices(integratorId: string, siteId: string): Promise<DeviceView[]>;
}

export class KnexSiteViewStore implements SiteViewStore {
  private readonly knex: Knex;
  private readonly schema: string;

  constructor(knex: Knex, schema: string) {
    this.knex = knex;
    this.schema = schema;
  }

  async upsertSites(views: readonly SiteView[]): Promise<void> {
    const rows = newestByKey(views, (v) => `${v.integrator_id}\u0000${v.site_id}`, (v) => v.updated_at.getTime());
    if (rows.length === 0) return;
    await this.knex.raw(
      `insert into ??.site_views as s (integrator_id, site_id, zip_code, deleted, created_at, updated_at) values ${rows.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
       on conflict (integrator_id, site_id) do update set zip_code = excluded.zip_code, deleted = excluded.deleted, created_at = excluded.created_at, updated_at = excluded.updated_at
       where s.updated_at <= excluded.updated_at`,
      [this.schema, ...rows.flatMap((v) => [v.integrator_id, v.site_id, v.zip_code, v.deleted, v.created_at, v.updated_at])],
    );
  }

  async upsertDevices(views: readonly DeviceView[]): Promise<void> {
    const rows = newestByKey(views, (v) => `${v.integrator_id}\u0000${v.device_id}`, (v) => v.updated_at.getTime());
    if (rows.length === 0) return;
    await this.knex.raw(
      `insert into ??.device_views as d (integrator_id, device_id, site_id, type, attributes, deleted, created_at, updated_at) values ${rows.map(() => '(?, ?, ?, ?, ?::jsonb, ?, ?, ?)').join(', ')}
       on conflict (integrator_id, device_id) do update set site_id = excluded.site_id, type = excluded.type, attributes = excluded.attributes,
         deleted = excluded.deleted, created_at = excluded.created_at, updated_at = excluded.updated_at
       where d.updated_at <= excluded.updated_at`,
      [this.schema, ...rows.flatMap((v) => [v.integrator_id, v.device_id, v.site_id, v.type, JSON.stringify(v.attributes), v.deleted, v.created_at, v.updated_at])],
    );
  }

  async getSite(integratorId: string, siteId: string): Promise<SiteView | undefined> {
    const row = (await this.knex.withSchema(this.schema).table('site_views').where({ integrator_id: integratorId, site_id: siteId }).first()) as SiteView | undefined;
    return row ? { ...row, created_at: row.created_at === null ? null : new Date(row.created_at), updated_at: new Date(row.updated_at) } : undefined;
  }

  async listDevices(integratorId: string, siteId: string): Promise<DeviceView[]> {
    const rows = (await this.knex
      .withSchema(this.schema)
      .table('device_views')
      .where({ integrator_id: integratorId, site_id: siteId, deleted: false })
      .orderBy([{ column: 'created_at' }, { column: 'device_id' }])) as DeviceView[];
    return rows.map((r) => ({ ...r, attributes: json(r.attributes), created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) }));
  }
}
