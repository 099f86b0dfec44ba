import { DeviceFields, SiteFields } from '@efs/contracts';
import { rowMapping, SchemaStore, type Knex } from '@efs/db';
import type { Device } from '../domain/device.ts';
import type { Site } from '../domain/site.ts';

export interface Page {
  skip: number;
  limit: number;
}

export interface SupplementRow {
  id: string;
  integrator_id: string;
  site_id: string;
  device_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Persistence of sites, devices and supplements; every read is scoped by integrator. */
export interface CommissioningStore {
  getSite(integratorId: string, siteId: string, trx?: Knex.Transaction): Promise<Site | undefined>;
  listSites(integratorId: string, page: Page): Promise<Site[]>;
  /**
   * The insert of new sites with their devices (one multi-row insert each), not yet run: the
   * caller runs it with the events announcing them in one statement (`Outbox.writeWith` for one
   * site, `Outbox.writeComposed` for a group commit's batch).
   */
  insertSitesWithDevices(sites: readonly { site: Site; devices: readonly Device[] }[]): Knex.QueryBuilder[];
  updateSite(trx: Knex.Transaction, site: Site): Promise<void>;
  getDevice(integratorId: string, deviceId: string, trx?: Knex.Transaction): Promise<Device | undefined>;
  /** Ids among `deviceIds` that the integrator uses already (in `trx`, or as committed). */
  existingDeviceIds(trx: Knex.Transaction | undefined, integratorId: string, deviceIds: readonly string[]): Promise<string[]>;
  listDevices(integratorId: string, siteId: string, page: Page): Promise<Device[]>;
  insertDevice(trx: Knex.Transaction, device: Device): Promise<void>;
  updateDevice(trx: Knex.Transaction, device: Device): Promise<void>;
  deleteDevice(trx: Knex.Transaction, integratorId: string, deviceId: string): Promise<void>;
  insertSupplement(trx: Knex.Transaction, s: SupplementRow): Promise<void>;
  /** Every site and every device of every integrator, oldest first (re-announcing the state). */
  allSites(): Promise<Site[]>;
  allDevices(): Promise<Device[]>;
}

type Row = Record<string, unknown>;
const siteRows = rowMapping(SiteFields);
const deviceRows = rowMapping(DeviceFields);

export class KnexCommissioningStore extends SchemaStore implements CommissioningStore {
  async getSite(integratorId: string, siteId: string, trx?: Knex.Transaction): Promise<Site | undefined> {
    const row = (await this.table('sites', trx).where({ integrator_id: integratorId, id: siteId }).first()) as Row | undefined;
    return row ? siteRows.fromRow(row) : undefined;
  }

  async listSites(integratorId: string, page: Page): Promise<Site[]> {
    const rows = (await this.table('sites').where({ integrator_id: integratorId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(page.skip).limit(page.limit)) as Row[];
    return rows.map((r) => siteRows.fromRow(r));
  }

  insertSitesWithDevices(sites: readonly { site: Site; devices: readonly Device[] }[]): Knex.QueryBuilder[] {
    const insertSites = this.table('sites').insert(sites.map((s) => siteRows.toRow(s.site)));
    const devices = sites.flatMap((s) => s.devices.map((d) => deviceRows.toRow(d)));
    return devices.length === 0 ? [insertSites] : [insertSites, this.table('devices').insert(devices)];
  }

  async updateSite(trx: Knex.Transaction, site: Site): Promise<void> {
    const { integrator_id, id, created_at: _created, ...changes } = siteRows.toRow(site);
    await this.table('sites', trx).where({ integrator_id, id }).update(changes);
  }

  async getDevice(integratorId: string, deviceId: string, trx?: Knex.Transaction): Promise<Device | undefined> {
    const row = (await this.table('devices', trx).where({ integrator_id: integratorId, id: deviceId }).first()) as Row | undefined;
    return row ? deviceRows.fromRow(row) : undefined;
  }

  async existingDeviceIds(trx: Knex.Transaction | undefined, integratorId: string, deviceIds: readonly string[]): Promise<string[]> {
    if (deviceIds.length === 0) return [];
    const rows = (await this.table('devices', trx).where({ integrator_id: integratorId }).whereIn('id', [...deviceIds]).select('id')) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async listDevices(integratorId: string, siteId: string, page: Page): Promise<Device[]> {
    const rows = (await this.table('devices')
      .where({ integrator_id: integratorId, site_id: siteId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .offset(page.skip)
      .limit(page.limit)) as Row[];
    return rows.map((r) => deviceRows.fromRow(r));
  }

  async insertDevice(trx: Knex.Transaction, d: Device): Promise<void> {
    await this.table('devices', trx).insert(deviceRows.toRow(d));
  }

  async updateDevice(trx: Knex.Transaction, d: Device): Promise<void> {
    const { integrator_id, id, created_at: _created, ...changes } = deviceRows.toRow(d);
    await this.table('devices', trx).where({ integrator_id, id }).update(changes);
  }

  async deleteDevice(trx: Knex.Transaction, integratorId: string, deviceId: string): Promise<void> {
    await this.table('devices', trx).where({ integrator_id: integratorId, id: deviceId }).delete();
  }

  async insertSupplement(trx: Knex.Transaction, s: SupplementRow): Promise<void> {
    await this.table('supplements', trx).insert({ ...s, data: JSON.stringify(s.data) });
  }

  async allSites(): Promise<Site[]> {
    return ((await this.table('sites').orderBy([{ column: 'created_at' }, { column: 'integrator_id' }, { column: 'id' }])) as Row[]).map((r) => siteRows.fromRow(r));
  }

  async allDevices(): Promise<Device[]> {
    return ((await this.table('devices').orderBy([{ column: 'created_at' }, { column: 'integrator_id' }, { column: 'id' }])) as Row[]).map((r) => deviceRows.fromRow(r));
  }
}
