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
    const site = await this.ask(integratorId, siteId, 'sites.get', {});
    if (site === 'not_found' || site === 'unavailable') return site;
    if (!isObject(site) || typeof site.id !== 'string') return 'unavailable';
    const devices = opts.devices ? await this.ask(integratorId, siteId, 'devices.list', { limit: ['1000'] }) : [];
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
      for (const d of Array.isArray(devices) ? devices : []) {
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

  private async ask(integratorId: string, siteId: string, op: string, query: Record<string, string[]>): Promise<unknown> {
    const principal = { kind: 'SYSTEM' as const, integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null };
    let reply;
    try {
      reply = await this.transport.request('commissioning', { op, principal, params: { siteId }, query, body: null }, { timeoutMs: this.timeoutMs, key: siteId });
    } catch (err) {
      this.logger.warn({ err, op, site_id: siteId }, 'commissioning did not answer');
      return 'unavailable';
    }
    if (reply.status === 404) return 'not_found';
    if (reply.status !== 200 || reply.body === null) {
      this.logger.warn({ status: reply.status, op, site_id: siteId }, 'commissioning refused a read-through');
      return 'unavailable';
    }
    return JSON.parse(reply.body) as unknown;
  }
}
