import type { Knex } from '@efs/db';
import type { DeviceTypeType } from '@efs/api';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import type { ReadModelStore } from './store/readModelStore.ts';

/** The outcome of asking commissioning: the site was refreshed, it does not exist, or no answer. */
export type LookupOutcome = 'found' | 'not_found' | 'unavailable';

const SITE_FIELDS = ['first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2', 'service_account_id'] as const;

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read-through to commissioning. The read models follow the commissioning topics a few
 * milliseconds behind; when a site or device an end user enrolls is missing or incomplete here,
 * the site (and its devices) are fetched with `sites.get` and upserted before deciding, under
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

  async refresh(integratorId: string, siteId: string): Promise<LookupOutcome> {
    const principal = { kind: 'SYSTEM' as const, integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null };
    let reply;
    try {
      reply = await this.transport.request('commissioning', { op: 'sites.get', principal, params: { siteId }, query: {}, body: null }, { timeoutMs: this.timeoutMs, key: siteId });
    } catch (err) {
      this.logger.warn({ err, site_id: siteId }, 'commissioning did not answer sites.get');
      return 'unavailable';
    }
    if (reply.status === 404) return 'not_found';
    if (reply.status !== 200 || reply.body === null) {
      this.logger.warn({ status: reply.status, site_id: siteId }, 'sites.get failed');
      return 'unavailable';
    }
    const body = JSON.parse(reply.body) as unknown;
    const site = isObject(body) && isObject(body.site) ? body.site : body;
    if (!isObject(site) || typeof site.id !== 'string') return 'unavailable';
    const now = new Date().toISOString();
    await this.knex.transaction(async (trx) => {
      const fields = Object.fromEntries(SITE_FIELDS.map((f) => [f, str(site[f])])) as Record<(typeof SITE_FIELDS)[number], string | null>;
      await this.readModels.upsertSite(trx, {
        integrator_id: integratorId,
        id: site.id as string,
        ...fields,
        created_at: str(site.created_at) ?? now,
        updated_at: str(site.updated_at) ?? now,
        deleted: false,
      });
      // Devices, when the answer carries them (beside the site or inside it).
      const devices = isObject(body) && Array.isArray(body.devices) ? body.devices : Array.isArray(site.devices) ? site.devices : [];
      for (const d of devices) {
        if (!isObject(d) || typeof d.id !== 'string' || (d.type !== 'BATTERY' && d.type !== 'EV_CHARGER')) continue;
        await this.readModels.upsertDevice(trx, {
          integrator_id: integratorId,
          site_id: siteId,
          id: d.id,
          type: d.type as DeviceTypeType,
          updated_at: str(d.updated_at) ?? now,
          deleted: false,
        });
      }
    });
    return 'found';
  }
}
