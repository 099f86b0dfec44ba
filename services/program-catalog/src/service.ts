import { CatalogOperations } from '@efs/api';
import { DevicesTopic, ProgramsTopic, SitesTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import { instanceId, systemClock, type Service, type ServiceDeps } from '@efs/runtime';
import type { CatalogConfig } from './config.ts';
import { CATALOG_SCHEMA, type CatalogContext } from './context.ts';
import { toProgramMessage } from './domain/program.ts';
import { sandboxPrograms, withSandboxSettings } from './domain/sandbox.ts';
import { eligiblePrograms } from './handlers/eligiblePrograms.ts';
import { getSiteProgram } from './handlers/getSiteProgram.ts';
import { listPrograms } from './handlers/listPrograms.ts';
import { createUtilityProgram } from './handlers/createUtilityProgram.ts';
import { getUtilityProgram } from './handlers/getUtilityProgram.ts';
import { listSitePrograms } from './handlers/listSitePrograms.ts';
import { listUtilityPrograms } from './handlers/listUtilityPrograms.ts';
import { onDevices } from './handlers/onDevices.ts';
import { onSites } from './handlers/onSites.ts';
import { updateUtilityProgram } from './handlers/updateUtilityProgram.ts';
import { ProgramReadModel } from './store/programReadModel.ts';
import { ProgramWrites } from './store/programWrites.ts';
import { KnexProgramStore } from './store/programStore.ts';
import { SiteDirectory } from './store/siteDirectory.ts';
import { KnexSiteViewStore } from './store/siteViewStore.ts';

/** Composition root of the program catalog: store, outbox, site read model, request handlers, sandbox seed. */
export async function createCatalogService(deps: ServiceDeps<CatalogConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'program-catalog' });
  const knex = deps.db.knex;
  const clock = systemClock;
  const store = new KnexProgramStore(knex, CATALOG_SCHEMA);
  // Reads answer from memory: GET /v1/programs and every commission's eligibility run no SQL.
  const programs = new ProgramReadModel(store, logger);
  // Polled every second, not every 5 s: a replica that does not hold the outbox lease answers a
  // program change only once the holder's relay has published it (ProgramWrites), and the holder
  // learns of another replica's rows only by its poll (as the gateways' credentials relay).
  const outbox = new Outbox({ knex, schema: CATALOG_SCHEMA, service: 'program-catalog', publisher: deps.transport, logger, topics: [ProgramsTopic], pollMs: 1000 });
  const writes = new ProgramWrites({ outbox, programs, timeoutMs: deps.config.CATALOG_ANNOUNCE_TIMEOUT_MS, logger });
  const sites = new SiteDirectory({ views: new KnexSiteViewStore(knex, CATALOG_SCHEMA), transport: deps.transport, logger, timeoutMs: deps.config.CATALOG_COMMISSIONING_TIMEOUT_MS, freshMs: deps.config.CATALOG_SITE_SETTLE_MS, clock });
  const ctx: CatalogContext = { knex, store, programs, outbox, writes, sites, clock, logger };

  const handlers = bindHandlers(CatalogOperations, ctx, {
    listPrograms,
    eligiblePrograms,
    listSitePrograms,
    getSiteProgram,
    listUtilityPrograms,
    getUtilityProgram,
    createUtilityProgram,
    updateUtilityProgram,
  });

  /**
   * Seeds the sandbox catalog in a fresh deployment and, at every start, gives the sandbox
   * programs this start's settings; each new or changed program is announced through the outbox.
   * Answers the announcements' outbox ids.
   */
  async function syncSandbox(): Promise<string[]> {
    const now = clock();
    const delay = deps.config.SANDBOX_AUTO_APPROVE_DELAY_MS;
    const { created, updated, ids } = await knex.transaction(async (trx) => {
      let [created, updated] = [0, 0];
      const ids: string[] = [];
      for (const p of sandboxPrograms(delay, now)) {
        if (await store.insert(trx, p)) {
          ids.push(...(await outbox.enqueue(trx, ProgramsTopic, p.id, toProgramMessage(p))));
          created++;
          continue;
        }
        await store.lock(trx, p.id);
        const current = await store.get(p.id, trx);
        const next = current && withSandboxSettings(current, delay, now);
        if (!next) continue;
        await store.update(trx, next, { zipCodesChanged: false, newTermsVersion: null });
        ids.push(...(await outbox.enqueue(trx, ProgramsTopic, next.id, toProgramMessage(next))));
        updated++;
      }
      return { created, updated, ids };
    });
    if (created > 0) logger.info({ created }, 'sandbox catalog seeded');
    if (updated > 0) logger.info({ updated, auto_approve_after_ms: delay }, 'sandbox programs given this start\'s settings');
    return ids;
  }

  return {
    name: 'program-catalog',
    async start() {
      const seeded = deps.config.SANDBOX_CATALOG ? await syncSandbox() : [];
      // Another replica's changes arrive on the programs topic (each replica reads all of them);
      // subscribed before the first load so that nothing falls between the two.
      await deps.transport.subscribe(ProgramsTopic, `efs-catalog-programs-${instanceId()}`, () => programs.reload());
      await programs.reload();
      outbox.start();
      // Serving only once the sandbox programs are on the topic, as a change is answered only then
      // (commissioning answers from the topic). Not in-process: its publishes wait until every
      // service of the process has started, and commissioning asks the catalog there anyway.
      if (deps.transport.topicsOutliveProcess) await writes.published(seeded);
      // In batches: one upsert per batch of sites or devices (a commission is a site and its devices).
      await deps.transport.subscribeBatch(SitesTopic, 'efs-catalog-sites', onSites(ctx), { fromBeginning: true, idempotent: true });
      await deps.transport.subscribeBatch(DevicesTopic, 'efs-catalog-devices', onDevices(ctx), { fromBeginning: true, idempotent: true });
      await deps.transport.serve('catalog', operationRouter(CatalogOperations, handlers, logger));
    },
    async stop() {
      await outbox.stop();
    },
  };
}
