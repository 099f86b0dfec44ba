import type { DeviceTypeType } from '@efs/api';
import { readSiteThrough } from '@efs/clients';
import type { DeviceMessage, SiteMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import type { Clock } from '@efs/runtime';
import type { SiteViewStore } from './siteViewStore.ts';

/** What the catalog knows of a site: its zip code and its devices, as eligibility and earnings need them. */
export interface SiteContext {
  zip_code: string | null;
  devices: { id: string; type: DeviceTypeType; attributes: Record<string, number> }[];
}

interface SiteDirectoryDeps {
  views: SiteViewStore;
  transport: Transport;
  logger: Logger;
  timeoutMs: number;
  freshMs: number;
  /** What a site's age is measured against (`freshMs`). */
  clock: Clock;
}

/**
 * The catalog's view of commissioning's sites, kept from SitesTopic and DevicesTopic. That read
 * model trails a commit by a few milliseconds, and a commissioning arrives as several messages
 * on two topics (the site, then each device), so it can be caught half-applied. Hence a site the
 * read model does not know, or one commissioned less than `freshMs` ago (whose devices may still
 * be arriving), is asked of commissioning directly (`sites.get`, `devices.list`) and the answer
 * is written into the read model. Later changes are single messages, applied whole.
 */
export class SiteDirectory {
  private readonly deps: SiteDirectoryDeps;

  constructor(deps: SiteDirectoryDeps) {
    this.deps = deps;
  }

  /** Applies SitesTopic messages, in their order (idempotent: older states never overwrite newer ones). */
  async applySites(messages: readonly SiteMessage[]): Promise<void> {
    await this.deps.views.upsertSites(messages.map((m) => ({ integrator_id: m.integrator_id, site_id: m.id, zip_code: m.zip_code, deleted: m.deleted, created_at: new Date(m.created_at), updated_at: new Date(m.updated_at) })));
  }

  /** Applies DevicesTopic messages likewise. */
  async applyDevices(messages: readonly DeviceMessage[]): Promise<void> {
    await this.deps.views.upsertDevices(
      messages.map((m) => ({
        integrator_id: m.integrator_id,
        device_id: m.id,
        site_id: m.site_id,
        type: m.type,
        attributes: m.attributes,
        deleted: m.deleted,
        created_at: new Date(m.created_at),
        updated_at: new Date(m.updated_at),
      })),
    );
  }

  /** The site of an integrator, or 404 when it does not exist. */
  async site(integratorId: string, siteId: string): Promise<SiteContext> {
    const view = await this.deps.views.getSite(integratorId, siteId);
    const known = view !== undefined && !view.deleted;
    const devices = known ? await this.deps.views.listDevices(integratorId, siteId) : [];
    const local: SiteContext = { zip_code: view?.zip_code ?? null, devices: devices.map((d) => ({ id: d.device_id, type: d.type, attributes: d.attributes })) };
    const settled = known && view.created_at !== null && this.deps.clock().getTime() - view.created_at.getTime() >= this.deps.freshMs;
    if (settled) return local;
    const read = await readSiteThrough(this.deps.transport, integratorId, siteId, { timeoutMs: this.deps.timeoutMs });
    if (read.outcome === 'not_found') throw Errors.NOT_FOUND(`Site ${siteId} not found`);
    if (read.outcome === 'unavailable') {
      if (!known) throw Errors.SERVICE_UNAVAILABLE('Commissioning did not answer; retry later', { cause: read.error });
      this.deps.logger.warn({ err: read.error, site_id: siteId }, 'commissioning did not answer; using the read model as it is');
      return local;
    }
    // Commissioning's answer goes into the read model as a topic message would.
    await this.applySites([read.site]);
    await this.applyDevices(read.devices);
    return { zip_code: read.site.zip_code, devices: read.devices.map((d) => ({ id: d.id, type: d.type, attributes: { ...d.attributes } })) };
  }
}
