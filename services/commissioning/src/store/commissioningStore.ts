import type { Knex } from '@efs/db';
import type { DeviceTypeType, StateCodeType } from '@efs/api';
import type { Device } from '../domain/device.ts';
import { SITE_FIELDS, type Site } from '../domain/site.ts';

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
  insertSite(trx: Knex.Transaction, site: Site): Promise<void>;
  updateSite(trx: Knex.Transaction, site: Site): Promise<void>;
  getDevice(integratorId: string, deviceId: string, trx?: Knex.Transaction): Promise<Device | undefined>;
  /** Ids among `deviceIds` that the integrator uses already. */
  existingDeviceIds(trx: Knex.Transaction, integratorId: string, deviceIds: readonly string[]): Promise<string[]>;
  listDevices(integratorId: string, siteId: string, page: Page): Promise<Device[]>;
  insertDevice(trx: Knex.Transaction, device: Device): Promise<void>;
  updateDevice(trx: Knex.Transaction, device: Device): Promise<void>;
  deleteDevice(trx: Knex.Transaction, integratorId: string, deviceId: string): Promise<void>;
  insertSupplement(trx: Knex.Transaction, s: SupplementRow): Promise<void>;
}

type SiteRow = Omit<Site, 'created_at' | 'updated_at'> & { created_at: Date | string; updated_at: Date | string };
type DeviceRow = Omit<Device, 'attributes' | 'install_date' | 'created_at' | 'updated_at'> & {
  attributes: Record<string, number> | string;
  install_date: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
};

/** Postgres unique violation: a concurrent insert of the same id. */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === '23505';

export class KnexCommissioningStore implements CommissioningStore {
  private readonly knex: Knex;
  private readonly schema: string;

  constructor(knex: Knex, schema: string) {
    this.knex = knex;
    this.schema = schema;
  }

  private t(table: string, trx?: Knex.Transaction) {
    return (trx ?? this.knex).withSchema(this.schema).table(table);
  }

  async getSite(integratorId: string, siteId: string, trx?: Knex.Transaction): Promise<Site | undefined> {
    const row = (await this.t('sites', trx).where({ integrator_id: integratorId, id: siteId }).first()) as SiteRow | undefined;
    return row ? toSite(row) : undefined;
  }

  async listSites(integratorId: string, page: Page): Promise<Site[]> {
    const rows = (await this.t('sites').where({ integrator_id: integratorId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(page.skip).limit(page.limit)) as SiteRow[];
    return rows.map(toSite);
  }

  async insertSite(trx: Knex.Transaction, site: Site): Promise<void> {
    await this.t('sites', trx).insert(siteRow(site));
  }

  async updateSite(trx: Knex.Transaction, site: Site): Promise<void> {
    const { integrator_id, id, created_at: _created, ...changes } = siteRow(site);
    await this.t('sites', trx).where({ integrator_id, id }).update(changes);
  }

  async getDevice(integratorId: string, deviceId: string, trx?: Knex.Transaction): Promise<Device | undefined> {
    const row = (await this.t('devices', trx).where({ integrator_id: integratorId, id: deviceId }).first()) as DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  async existingDeviceIds(trx: Knex.Transaction, integratorId: string, deviceIds: readonly string[]): Promise<string[]> {
    if (deviceIds.length === 0) return [];
    const rows = (await this.t('devices', trx).where({ integrator_id: integratorId }).whereIn('id', [...deviceIds]).select('id')) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async listDevices(integratorId: string, siteId: string, page: Page): Promise<Device[]> {
    const rows = (await this.t('devices')
      .where({ integrator_id: integratorId, site_id: siteId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .offset(page.skip)
      .limit(page.limit)) as DeviceRow[];
    return rows.map(toDevice);
  }

  async insertDevice(trx: Knex.Transaction, d: Device): Promise<void> {
    await this.t('devices', trx).insert(deviceRow(d));
  }

  async updateDevice(trx: Knex.Transaction, d: Device): Promise<void> {
    const { integrator_id, id, created_at: _created, ...changes } = deviceRow(d);
    await this.t('devices', trx).where({ integrator_id, id }).update(changes);
  }

  async deleteDevice(trx: Knex.Transaction, integratorId: string, deviceId: string): Promise<void> {
    await this.t('devices', trx).where({ integrator_id: integratorId, id: deviceId }).delete();
  }

  async insertSupplement(trx: Knex.Transaction, s: SupplementRow): Promise<void> {
    await this.t('supplements', trx).insert({ ...s, data: JSON.stringify(s.data) });
  }
}

function siteRow(s: Site): Record<string, unknown> {
  const row: Record<string, unknown> = { integrator_id: s.integrator_id, id: s.id, created_at: s.created_at, updated_at: s.updated_at };
  for (const f of SITE_FIELDS) row[f] = s[f];
  return row;
}

function toSite(r: SiteRow): Site {
  return {
    integrator_id: r.integrator_id,
    id: r.id,
    first_name: r.first_name,
    last_name: r.last_name,
    company_name: r.company_name,
    email: r.email,
    state_code: r.state_code as StateCodeType | null,
    city: r.city,
    zip_code: r.zip_code,
    street_address: r.street_address,
    street_address2: r.street_address2,
    service_account_id: r.service_account_id,
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  };
}

function deviceRow(d: Device): Record<string, unknown> {
  return { ...d, attributes: JSON.stringify(d.attributes) };
}

function toDevice(r: DeviceRow): Device {
  return {
    integrator_id: r.integrator_id,
    id: r.id,
    site_id: r.site_id,
    manufacturer_name: r.manufacturer_name,
    product_name: r.product_name,
    serial_number: r.serial_number,
    type: r.type as DeviceTypeType,
    attributes: typeof r.attributes === 'string' ? (JSON.parse(r.attributes) as Record<string, number>) : r.attributes,
    reserve_percentage: r.reserve_percentage,
    install_date: new Date(r.install_date),
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  };
}
