import type { DeviceCreateInType, SiteType, SiteUpdateType } from '@efs/api';
import { DevicesTopic, SitesTopic, deviceKey, outsideRequest, pastDeadlineError, requestDeadline, siteKey } from '@efs/contracts';
import { GroupCommit, isUniqueViolation, outboxEvent, type ItemOutcome, type Knex, type Outbox, type OutboxEvent } from '@efs/db';
import { Errors } from '@efs/errors';
import type { Clock } from '@efs/runtime';
import { injectTraceHeaders } from '@efs/telemetry';
import { newDevice, toDeviceMessage, type Device } from '../domain/device.ts';
import { applySiteUpdate, newSite, toSiteMessage, type Site } from '../domain/site.ts';
import type { CommissioningStore } from './commissioningStore.ts';

interface SiteWriterDeps {
  knex: Knex;
  store: CommissioningStore;
  outbox: Outbox;
  /** The time new and updated sites and devices are stamped with. */
  clock: Clock;
  /**
   * Whether new sites created meanwhile share a statement (group commit). For a Postgres server,
   * where each statement is a round trip and a commit; not for PGlite, which runs every statement
   * of the process in turn in the process itself (measured slower with it, bench/PROFILE.md).
   */
  groupCommit: boolean;
}

/** A new site with its devices, waiting to be written, with what its request's write needs. */
interface NewSite {
  site: Site;
  devices: Device[];
  events: OutboxEvent[];
  /** The request's deadline (epoch ms), if any. */
  deadline: number | undefined;
}

/** Most new sites written in one statement, and most rows (sites and devices) in it. */
const MAX_SITES_PER_WRITE = 64;
const MAX_ROWS_PER_WRITE = 500;
const WHAT = `the ${SitesTopic.name} change`;

/**
 * Writes a site with its devices and their announcements atomically: a new one in one statement,
 * an update in one transaction (commissioning, `sites.ensure` and site updates). Service calls never run inside it (embedded mode shares one
 * connection).
 */
export class SiteWriter {
  private readonly deps: SiteWriterDeps;
  private readonly newSites: GroupCommit<NewSite, void> | undefined;

  constructor(deps: SiteWriterDeps) {
    this.deps = deps;
    this.newSites = !deps.groupCommit ? undefined : new GroupCommit({
      writeOne: (n) => this.writeAlone(n),
      writeAll: (all) => outsideRequest(() => this.writeTogether(all)),
      // A taken id fails the batch's one statement: each site again alone finds whose it is.
      retryAlone: isUniqueViolation,
      // A site still waiting for its turn at its request's deadline answers 503 then, stored nowhere.
      deadlineOf: (n) => n.deadline,
      expired: () => pastDeadlineError(WHAT),
      maxItems: MAX_SITES_PER_WRITE,
      maxWeight: MAX_ROWS_PER_WRITE,
      weightOf: (n) => 1 + n.devices.length,
    });
  }

  /**
   * Creates a site and its devices with their announcements, all or nothing; 409 when an id is
   * taken. One statement (the site, the devices and the announcements, `Outbox.writeWith`), so
   * no transaction: the primary keys refuse a taken id, and only then is it looked up which one,
   * so that the answer names it (the site first, then the first device in the request's order).
   *
   * Group commit: sites created while another one's statement runs wait and go in the next
   * statement together; when that statement fails on a taken id, each is written again alone, so
   * every request gets the 409 or the success it would have got alone. Any other failure of the
   * statement (a lost connection) is every request's answer in it. A request still waiting at its
   * deadline answers 503 then; the statement in flight has no timeout of its own (the pool's and
   * the server's), so a hung one holds its own batch, not the requests queued behind it.
   */
  async createSite(integratorId: string, input: SiteType, deviceInputs: readonly DeviceCreateInType[]): Promise<{ site: Site; devices: Device[] }> {
    const now = this.deps.clock();
    const site = newSite(integratorId, input, now);
    const devices = deviceInputs.map((d) => newDevice(integratorId, d.id, d, now));
    const headers = injectTraceHeaders();
    const events = [
      { ...outboxEvent(SitesTopic, siteKey(integratorId, site.id), toSiteMessage(site)), headers },
      ...devices.map((d) => ({ ...outboxEvent(DevicesTopic, deviceKey(integratorId, site.id, d.id), toDeviceMessage(d)), headers })),
    ];
    const n: NewSite = { site, devices, events, deadline: requestDeadline() };
    await (this.newSites ? this.newSites.submit(n) : this.writeAlone(n));
    return { site, devices };
  }

  /** One new site in its own statement, in its request's context. */
  private async writeAlone(n: NewSite): Promise<void> {
    try {
      await this.deps.outbox.writeWith(this.deps.store.insertSitesWithDevices([n]), n.events);
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.takenId(n.site.integrator_id, n.site.id, n.devices);
      throw err;
    }
  }

  /**
   * Several new sites in one statement. Those whose request passed its deadline while the
   * statement waited for its connection are left out and answered as alone (503, nothing stored).
   */
  private async writeTogether(all: readonly NewSite[]): Promise<ItemOutcome<void>[]> {
    const outcomes: ItemOutcome<void>[] = all.map(() => ({ ok: true, value: undefined }));
    await this.deps.outbox.writeComposed(() => {
      const now = Date.now();
      const live = all.filter((n, i) => {
        if (n.deadline === undefined || now <= n.deadline) return true;
        outcomes[i] = { ok: false, error: pastDeadlineError(WHAT) };
        return false;
      });
      return live.length === 0 ? undefined : { changes: this.deps.store.insertSitesWithDevices(live), events: live.flatMap((n) => n.events) };
    });
    return outcomes;
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
    const now = this.deps.clock();
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
