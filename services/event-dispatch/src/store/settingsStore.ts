import type { SettingsStatusType } from '@efs/api';
import type { Knex } from '@efs/db';
import type { SettingsRequest } from '../domain/settings.ts';
import { UUID } from './eventStore.ts';

/** Persistence of settings requests. */
export interface SettingsStore {
  insert(trx: Knex.Transaction, r: SettingsRequest): Promise<void>;
  update(trx: Knex.Transaction, r: SettingsRequest): Promise<void>;
  find(db: Knex, integratorId: string, id: string, lock?: { forUpdate?: boolean }): Promise<SettingsRequest | undefined>;
  /** The device's PENDING requests, locked. */
  lockPending(trx: Knex.Transaction, integratorId: string, siteId: string, deviceId: string): Promise<SettingsRequest[]>;
  list(db: Knex, integratorId: string, f: { status?: SettingsStatusType[] | undefined; skip: number; limit: number }): Promise<SettingsRequest[]>;
}

type Row = Omit<SettingsRequest, 'created_at' | 'updated_at'> & { created_at: Date | string; updated_at: Date | string };
const toRequest = (r: Row): SettingsRequest => ({ ...r, created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) });

export class KnexSettingsStore implements SettingsStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  private t(db: Knex) {
    return db.withSchema(this.schema).table('settings_requests');
  }

  async insert(trx: Knex.Transaction, r: SettingsRequest): Promise<void> {
    await this.t(trx).insert(r);
  }

  async update(trx: Knex.Transaction, r: SettingsRequest): Promise<void> {
    await this.t(trx).where({ id: r.id }).update({ status: r.status, status_reason: r.status_reason, updated_at: r.updated_at });
  }

  async find(db: Knex, integratorId: string, id: string, lock: { forUpdate?: boolean } = {}): Promise<SettingsRequest | undefined> {
    if (!UUID.test(id)) return undefined;
    const q = this.t(db).where({ id, integrator_id: integratorId });
    if (lock.forUpdate) q.forUpdate();
    const r = (await q.first()) as Row | undefined;
    return r ? toRequest(r) : undefined;
  }

  async lockPending(trx: Knex.Transaction, integratorId: string, siteId: string, deviceId: string): Promise<SettingsRequest[]> {
    const rows = (await this.t(trx).where({ integrator_id: integratorId, site_id: siteId, device_id: deviceId, status: 'PENDING' }).orderBy('created_at').forUpdate()) as Row[];
    return rows.map(toRequest);
  }

  async list(db: Knex, integratorId: string, f: { status?: SettingsStatusType[] | undefined; skip: number; limit: number }): Promise<SettingsRequest[]> {
    const q = this.t(db).where({ integrator_id: integratorId });
    if (f.status?.length) q.whereIn('status', f.status);
    const rows = (await q.orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(f.skip).limit(f.limit)) as Row[];
    return rows.map(toRequest);
  }
}
