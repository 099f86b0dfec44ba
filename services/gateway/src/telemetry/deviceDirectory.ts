import { DevicesTopic, type DeviceMessage } from '@efs/contracts';
import { SchemaStore, type Knex } from '@efs/db';
import type { Transport } from '@efs/messaging';

/** What the directory keeps of a device message. */
export type DeviceEntry = Pick<DeviceMessage, 'integrator_id' | 'site_id' | 'id' | 'updated_at' | 'deleted'>;

interface Entry {
  siteId: string;
  updatedAt: string;
  deleted: boolean;
}

/**
 * Which devices each integrator has, in every gateway replica's memory, so that a telemetry batch
 * is checked without asking commissioning anything. Fed from the commissioning devices topic and
 * kept in the gateway's `device_directory` table, which a replica loads at start. About 100 bytes
 * per device: a million devices take roughly 100 MB per replica.
 *
 * A device's messages are keyed by its site, so a device deleted at one site and created at
 * another may arrive in either order: `updated_at` decides, a later change wins, and a deletion is
 * remembered as such so that an older creation arriving after it cannot revive the device.
 */
export class DeviceDirectory {
  private readonly byIntegrator = new Map<string, Map<string, Entry>>();
  private count = 0;

  /** Whether the change tells something new: a device not known, or a later state of it. */
  isNews(d: DeviceEntry): boolean {
    const kept = this.byIntegrator.get(d.integrator_id)?.get(d.id);
    if (!kept) return true;
    const [k, n] = [Date.parse(kept.updatedAt), Date.parse(d.updated_at)];
    if (k > n || (k === n && kept.deleted === d.deleted && kept.siteId === d.site_id)) return false;
    // A deletion at a site the device has already left says nothing about where it is now.
    return !(d.deleted && !kept.deleted && kept.siteId !== d.site_id);
  }

  apply(d: DeviceEntry): void {
    if (!this.isNews(d)) return;
    let devices = this.byIntegrator.get(d.integrator_id);
    if (!devices) this.byIntegrator.set(d.integrator_id, (devices = new Map()));
    if (!devices.has(d.id)) this.count++;
    devices.set(d.id, { siteId: d.site_id, updatedAt: d.updated_at, deleted: d.deleted });
  }

  /** The site of the integrator's device, or undefined for an unknown, deleted or another integrator's device. */
  siteOf(integratorId: string, deviceId: string): string | undefined {
    const e = this.byIntegrator.get(integratorId)?.get(deviceId);
    return e && !e.deleted ? e.siteId : undefined;
  }

  /** Devices remembered (deleted ones included). */
  get size(): number {
    return this.count;
  }
}

/** The directory's table in the gateway's schema: loaded at start, written as device changes arrive. */
export class KnexDeviceDirectoryStore extends SchemaStore {
  async loadInto(directory: DeviceDirectory): Promise<void> {
    const rows = (await this.table('device_directory').select('integrator_id', 'device_id', 'site_id', 'updated_at', 'deleted')) as { integrator_id: string; device_id: string; site_id: string; updated_at: string; deleted: boolean }[];
    for (const r of rows) directory.apply({ integrator_id: r.integrator_id, id: r.device_id, site_id: r.site_id, updated_at: r.updated_at, deleted: r.deleted });
  }

  /** Upserts the changes, never putting an older one over a newer one (replicas write the same rows). */
  async save(changes: readonly DeviceEntry[]): Promise<void> {
    if (changes.length === 0) return;
    // One row per device (the newest), or the statement would touch a row twice.
    const newest = new Map<string, DeviceEntry>();
    for (const d of changes) {
      const k = `${d.integrator_id}\u0000${d.id}`;
      const kept = newest.get(k);
      if (!kept || Date.parse(kept.updated_at) <= Date.parse(d.updated_at)) newest.set(k, d);
    }
    const rows = [...newest.values()].map((d) => ({ integrator_id: d.integrator_id, device_id: d.id, site_id: d.site_id, updated_at: d.updated_at, deleted: d.deleted }));
    await this.table('device_directory')
      .insert(rows)
      .onConflict(['integrator_id', 'device_id'])
      .merge()
      .where(this.knex.raw('device_directory.updated_at::timestamptz <= excluded.updated_at::timestamptz'));
  }
}

/**
 * Keeps a replica's directory current: the table first (a replica starts knowing every device),
 * then the devices topic from its start, each replica in its own consumer group. A change is stored
 * before it is applied, so a failed write is retried with the same news.
 */
export class DeviceDirectorySync {
  readonly directory = new DeviceDirectory();
  private readonly store: KnexDeviceDirectoryStore;
  private readonly transport: Transport;
  private readonly replicaId: string;

  constructor(opts: { knex: Knex; schema: string; transport: Transport; replicaId: string }) {
    this.store = new KnexDeviceDirectoryStore(opts.knex, opts.schema);
    this.transport = opts.transport;
    this.replicaId = opts.replicaId;
  }

  async start(): Promise<void> {
    await this.store.loadInto(this.directory);
    await this.transport.subscribeBatch(
      DevicesTopic,
      `efs-gateway-devices-${this.replicaId}`,
      async (batch) => {
        await this.store.save(batch.map(({ value }) => value).filter((d) => this.directory.isNews(d)));
        for (const { value } of batch) this.directory.apply(value);
      },
      { fromBeginning: true, maxBatchSize: 5000, idempotent: true },
    );
  }
}
