import type { Knex } from '@efs/db';
import { fetchSiteWithDevices } from '@efs/clients';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import type { ReadModelStore } from './store/readModelStore.ts';

/** The outcome of asking commissioning: the site was refreshed, it does not exist, or no answer. */
export type LookupOutcome = 'found' | 'not_found' | 'unavailable';

const SITE_FIELDS = ['first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2', 'service_account_id'] as const;


/**
 * Read-through to commissioning. The read models follow the commissioning topics a few
 * milliseconds behind; when a site or device an end user enrolls is missing or incomplete here,
 * the site (`sites.get`) and its devices (`devices.list`) are fetched and upserted before deciding, under
 * the same "never older over newer" rule as the topic consumers.
 */
export class SiteLookup {
  private readonly knex: Knex;
  private readonly readModels: ReadModelStore;
  private readonly transport: Transport;
  private readonly logger: Logger;
  private readonly timeoutMs: number;

  constructor(opts: { knex: Knex; readModels: ReadModelStore; transport: Transport; logger: Logger; timeoutMs: number }) {
    this.knex = opts.knex;
    this.readModels = opts.readModels;
    this.transport = opts.transport;
    this.logger = opts.logger.child({ component: 'site-lookup' });
    this.timeoutMs = opts.timeoutMs;
  }

  /** Refreshes the site (`sites.get`) and, when asked, its devices (`devices.list`). */
  async refresh(integratorId: string, siteId: string, opts: { devices: boolean }): Promise<LookupOutcome> {
    let found;
    try {
      found = await fetchSiteWithDevices(this.transport, integratorId, siteId, { timeoutMs: this.timeoutMs, devices: opts.devices });
    } catch (err) {
      this.logger.warn({ err, site_id: siteId }, 'commissioning did not answer a read-through');
      return 'unavailable';
    }
    if (!found) return 'not_found';
    const { site, devices } = found;
    await this.knex.transaction(async (trx) => {
      const fields = Object.fromEntries(SITE_FIELDS.map((f) => [f, site[f] ?? null])) as Record<(typeof SITE_FIELDS)[number], string | null>;
      await this.readModels.upsertSite(trx, { integrator_id: integratorId, id: site.id, ...fields, created_at: site.created_at, updated_at: site.updated_at, deleted: false });
      for (const d of devices) {
        await this.readModels.upsertDevice(trx, { integrator_id: integratorId, site_id: siteId, id: d.id, type: d.type, updated_at: d.updated_at, deleted: false });
      }
    });
    return 'found';
  }
}
