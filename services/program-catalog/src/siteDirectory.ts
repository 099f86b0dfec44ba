import type { DeviceTypeType } from '@efs/api';
import { fetchSiteWithDevices } from '@efs/clients';
import type { DeviceMessage, SiteMessage } from '@efs/contracts';
import { AppError } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';
import type { SiteViewStore } from './store/siteViewStore.ts';

/** What the catalog knows of a site: its zip code and its devices, as eligibility and earnings need them. */
export interface SiteContext {
  zip_code: string | null;
  devices: { id: string; type: DeviceTypeType; attributes: Record<string, number> }[];
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
  private readonly views: SiteViewStore;
  private readonly transport: Transport;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly freshMs: number;

  constructor(opts: { views: SiteViewStore; transport: Transport; logger: Logger; timeoutMs: number; freshMs: number }) {
    this.views = opts.views;
    this.transport = opts.transport;
    this.logger = opts.logger;
    this.timeoutMs = opts.timeoutMs;
    this.freshMs = opts.freshMs;
  }

  /** Applies a SitesTopic message (idempotent: older states never overwrite newer ones). */
  async applySite(m: SiteMessage): Promise<void> {
    await this.views.upsertSite({ integrator_id: m.integrator_id, site_id: m.id, zip_code: m.zip_code, deleted: m.deleted, created_at: new Date(m.created_at), updated_at: new Date(m.updated_at) });
  }

  /** Applies a DevicesTopic message (idempotent likewise). */
  async applyDevice(m: DeviceMessage): Promise<void> {
    await this.views.upsertDevice({
      integrator_id: m.integrator_id,
      device_id: m.id,
      site_id: m.site_id,
      type: m.type,
      attributes: m.attributes,
      deleted: m.deleted,
      created_at: new Date(m.created_at),
      updated_at: new Date(m.updated_at),
    });
  }

  /** The site of an integrator, or 404 when it does not exist. */
  async site(integratorId: string, siteId: string): Promise<SiteContext> {
    const view = await this.views.getSite(integratorId, siteId);
    const known = view !== undefined && !view.deleted;
    const devices = known ? await this.views.listDevices(integratorId, siteId) : [];
    const local: SiteContext = { zip_code: view?.zip_code ?? null, devices: devices.map((d) => ({ id: d.device_id, type: d.type, attributes: d.attributes })) };
    const settled = known && view.created_at !== null && Date.now() - view.created_at.getTime() >= this.freshMs;
    if (settled) return local;
    try {
      return await this.fetch(integratorId, siteId);
    } catch (err) {
      if (err instanceof ServiceUnavailableError && known) {
        this.logger.warn({ site_id: siteId }, 'commissioning did not answer; using the read model as it is');
        return local;
      }
      if (err instanceof ServiceUnavailableError) throw new AppError('SERVICE_UNAVAILABLE', 'Commissioning did not answer; retry later', { cause: err });
      throw err;
    }
  }

  /** Asks commissioning for the site and its devices and writes them into the read model. */
  private async fetch(integratorId: string, siteId: string): Promise<SiteContext> {
    const found = await fetchSiteWithDevices(this.transport, integratorId, siteId, { timeoutMs: this.timeoutMs });
    if (!found) throw new AppError('NOT_FOUND', `Site ${siteId} not found`);
    const { site, devices } = found;
    await this.views.upsertSite({ integrator_id: integratorId, site_id: site.id, zip_code: site.zip_code, deleted: false, created_at: new Date(site.created_at), updated_at: new Date(site.updated_at) });
    for (const d of devices) {
      await this.views.upsertDevice({
        integrator_id: integratorId,
        device_id: d.id,
        site_id: d.site_id,
        type: d.type,
        attributes: { ...d.attributes },
        deleted: false,
        created_at: new Date(d.created_at),
        updated_at: new Date(d.updated_at),
      });
    }
    return { zip_code: site.zip_code, devices: devices.map((d) => ({ id: d.id, type: d.type, attributes: { ...d.attributes } })) };
  }
}
