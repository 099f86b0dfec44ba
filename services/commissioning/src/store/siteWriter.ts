import type { DeviceCreateInType, SiteType, SiteUpdateType } from '@efs/api';
import { DevicesTopic, SitesTopic, deviceKey, siteKey } from '@efs/contracts';
import { isUniqueViolation, outboxEvent, type Knex, type Outbox } from '@efs/db';
import { Errors } from '@efs/errors';
import { newDevice, toDeviceMessage, type Device } from '../domain/device.ts';
import { applySiteUpdate, newSite, toSiteMessage, type Site } from '../domain/site.ts';
import type { CommissioningStore } from './commissioningStore.ts';

interface SiteWriterDeps {
  knex: Knex;
  store: CommissioningStore;
  outbox: Outbox;
}

/**
 * Writes a site with its devices and their announcements atomically: a new one in one statement,
 * an update in one transaction (commissioning, `sites.ensure` and site updates). Service calls never run inside it (embedded mode shares one
 * connection).
 */
export class SiteWriter {
  private readonly deps: SiteWriterDeps;

  constructor(deps: SiteWriterDeps) {
    this.deps = deps;
  }

  /**
   * Creates a site and its devices with their announcements, all or nothing; 409 when an id is
   * taken. One statement (the site, the devices and the announcements, `Outbox.writeWith`), so
   * no transaction: the primary keys refuse a taken id, and only then is it looked up which one,
   * so that the answer names it (the site first, then the first device in the request's order).
   */
  async createSite(integratorId: string, input: SiteType, deviceInputs: readonly DeviceCreateInType[]): Promise<{ site: Site; devices: Device[] }> {
    const now = new Date();
    const site = newSite(integratorId, input, now);
    const devices = deviceInputs.map((d) => newDevice(integratorId, d.id, d, now));
    try {
      await this.deps.outbox.writeWith(this.deps.store.insertSiteWithDevices(site, devices), [
        outboxEvent(SitesTopic, siteKey(integratorId, site.id), toSiteMessage(site)),
        ...devices.map((d) => outboxEvent(DevicesTopic, deviceKey(integratorId, site.id, d.id), toDeviceMessage(d))),
      ]);
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.takenId(integratorId, site.id, devices);
      throw err;
    }
    return { site, devices };
  }

  /** The 409 for a site whose id, or one of whose device ids, the primary keys refused. */
  private async takenId(integratorId: string, siteId: string, devices: readonly Device[]): Promise<Error> {
    if (await this.deps.store.getSite(integratorId, siteId)) return Errors.CONFLICT.forField(`Site ${siteId} exists already`, ['site', 'id']);
    const taken = new Set(await this.deps.store.existingDeviceIds(undefined, integratorId, devices.map((d) => d.id)));
    const i = devices.findIndex((d) => taken.has(d.id));
    if (i >= 0) return Errors.CONFLICT.forField(`Device ${devices[i]!.id} exists already`, ['devices', i, 'id']);
    // Taken by another request whose write is gone again, or the same device id twice in this one.
    return Errors.CONFLICT.forField('The site or one of its devices exists already', ['site', 'id']);
  }

  /** Applies a site update to a site the caller read in `trx`, announcing it when something changed. */
  async updateSite(trx: Knex.Transaction, current: Site, patch: SiteUpdateType, now: Date): Promise<Site> {
    const { site, changed } = applySiteUpdate(current, patch, now);
    if (changed) {
      await this.deps.store.updateSite(trx, site);
      await this.deps.outbox.enqueue(trx, SitesTopic, siteKey(site.integrator_id, site.id), toSiteMessage(site));
    }
    return site;
  }

  /**
   * Brings an existing site up to what a caller sends again (`POST /v1/sessions`): the site fields
   * it carries are applied as a site update and the devices not yet known are added; known ones
   * stay as they are, and a device id the integrator uses at another site is a 409. All or
   * nothing; undefined when the site does not exist.
   */
  async reuseSite(integratorId: string, input: SiteType, deviceInputs: readonly DeviceCreateInType[]): Promise<{ site: Site; added: Device[] } | undefined> {
    const now = new Date();
    return this.deps.knex.transaction(async (trx) => {
      const current = await this.deps.store.getSite(integratorId, input.id, trx);
      if (!current) return undefined;
      const { id: _id, ...fields } = input;
      const site = await this.updateSite(trx, current, fields, now);
      const known = new Set(await this.deps.store.existingDeviceIds(trx, integratorId, deviceInputs.map((d) => d.id)));
      const added: Device[] = [];
      for (const [i, d] of deviceInputs.entries()) {
        if (known.has(d.id)) {
          const elsewhere = (await this.deps.store.getDevice(integratorId, d.id, trx))?.site_id !== site.id;
          if (elsewhere) throw Errors.CONFLICT.forField(`Device ${d.id} belongs to another site`, ['devices', i, 'id']);
          continue;
        }
        const device = newDevice(integratorId, d.id, d, now);
        await this.deps.store.insertDevice(trx, device);
        await this.deps.outbox.enqueue(trx, DevicesTopic, deviceKey(integratorId, site.id, device.id), toDeviceMessage(device));
        added.push(device);
      }
      return { site, added };
    });
  }
}
