import { readSiteThrough } from '@efs/clients';
import type { Knex } from '@efs/db';
import { Errors } from '@efs/errors';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import { missingSiteFields } from '../domain/enrollmentRules.ts';
import type { DeviceView, SiteView } from '../domain/readModels.ts';
import type { ReadModelStore } from './readModelStore.ts';

interface SiteDirectoryDeps {
  knex: Knex;
  readModels: ReadModelStore;
  transport: Transport;
  logger: Logger;
  timeoutMs: number;
}

/**
 * Enrollment's view of commissioning's sites and devices: the read models the topics feed,
 * which follow a commit a few milliseconds behind. When a site or device an end user enrolls is
 * missing or incomplete there, commissioning is asked (the shared read-through) and its answer
 * is written into the read models under the same "never older over newer" rule as the topics.
 */
export class SiteDirectory {
  private readonly deps: SiteDirectoryDeps;
  private readonly logger: Logger;

  constructor(deps: SiteDirectoryDeps) {
    this.deps = deps;
    this.logger = deps.logger.child({ component: 'site-directory' });
  }

  /** The site and the named devices of it that exist; 404 for an unknown site, 503 when it cannot be known now. */
  async siteAndDevices(integratorId: string, siteId: string, deviceIds: readonly string[]): Promise<{ site: SiteView; devices: DeviceView[] }> {
    let site = await this.deps.readModels.getSite(this.deps.knex, integratorId, siteId);
    let devices = await this.deps.readModels.getDevices(this.deps.knex, integratorId, siteId, deviceIds);
    if (!site || missingSiteFields(site).length > 0 || devices.length < deviceIds.length) {
      const read = await readSiteThrough(this.deps.transport, integratorId, siteId, { timeoutMs: this.deps.timeoutMs, devices: devices.length < deviceIds.length });
      if (read.outcome === 'found') {
        await this.deps.knex.transaction(async (trx) => {
          await this.deps.readModels.upsertSite(trx, read.site);
          for (const d of read.devices) await this.deps.readModels.upsertDevice(trx, d);
        });
      } else if (read.outcome === 'unavailable') {
        this.logger.warn({ err: read.error, site_id: siteId }, 'commissioning did not answer a read-through');
      }
      site = await this.deps.readModels.getSite(this.deps.knex, integratorId, siteId);
      devices = await this.deps.readModels.getDevices(this.deps.knex, integratorId, siteId, deviceIds);
      if (!site && read.outcome === 'unavailable') throw Errors.SERVICE_UNAVAILABLE('Site information is not available right now; retry later');
    }
    if (!site) throw Errors.NOT_FOUND(`Site ${siteId} not found`);
    return { site, devices };
  }
}
