import { DevicesTopic, ProgramsTopic, SitesTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { operationRouter } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { CatalogConfig } from './config.ts';
import { sandboxPrograms } from './domain/sandbox.ts';
import { eligiblePrograms } from './handlers/eligiblePrograms.ts';
import { getSiteProgram } from './handlers/getSiteProgram.ts';
import { listPrograms } from './handlers/listPrograms.ts';
import { listSitePrograms } from './handlers/listSitePrograms.ts';
import { utilityCreateProgram, utilityGetProgram, utilityListPrograms, utilityUpdateProgram } from './handlers/utilityPrograms.ts';
import { toProgramMessage } from './programMessage.ts';
import { SiteDirectory } from './siteDirectory.ts';
import { KnexProgramStore } from './store/programStore.ts';
import { KnexSiteViewStore } from './store/siteViewStore.ts';

export const CATALOG_SCHEMA = 'catalog';

/** Composition root of the program catalog: store, outbox, site read model, request handlers, sandbox seed. */
export async function createCatalogService(deps: ServiceDeps<CatalogConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'program-catalog' });
  const knex = deps.db.knex;
  const store = new KnexProgramStore(knex, CATALOG_SCHEMA);
  const outbox = new Outbox({ knex, schema: CATALOG_SCHEMA, publisher: deps.transport, logger, topics: [ProgramsTopic] });
  const sites = new SiteDirectory({ views: new KnexSiteViewStore(knex, CATALOG_SCHEMA), transport: deps.transport, logger, timeoutMs: deps.config.CATALOG_COMMISSIONING_TIMEOUT_MS, freshMs: deps.config.CATALOG_SITE_SETTLE_MS });

  /** Seeds the sandbox catalog once; each new program is announced through the outbox. */
  async function seedSandbox(): Promise<void> {
    const created = await knex.transaction(async (trx) => {
      let n = 0;
      for (const p of sandboxPrograms(deps.config.SANDBOX_AUTO_APPROVE_DELAY_MS, new Date())) {
        if (await store.insert(trx, p)) {
          await outbox.enqueue(trx, ProgramsTopic, p.id, toProgramMessage(p));
          n++;
        }
      }
      return n;
    });
    if (created > 0) logger.info({ created }, 'sandbox catalog seeded');
  }

  return {
    name: 'program-catalog',
    async start() {
      if (deps.config.SANDBOX_CATALOG) await seedSandbox();
      outbox.start();
      // The read model of sites and devices: upserts by updated_at make redelivery harmless.
      await deps.transport.subscribe(SitesTopic, 'efs-catalog-sites', async ({ value }) => sites.applySite(value), { fromBeginning: true });
      await deps.transport.subscribe(DevicesTopic, 'efs-catalog-devices', async ({ value }) => sites.applyDevice(value), { fromBeginning: true });
      await deps.transport.serve(
        'catalog',
        operationRouter(
          {
            'programs.list': listPrograms(store),
            'programs.eligible': eligiblePrograms(store),
            'site.programs.list': listSitePrograms(store, sites),
            'site.programs.get': getSiteProgram(store, sites),
            'utility.programs.list': utilityListPrograms(store),
            'utility.programs.get': utilityGetProgram(store),
            'utility.programs.create': utilityCreateProgram(knex, store, outbox),
            'utility.programs.update': utilityUpdateProgram(knex, store, outbox),
          },
          logger,
        ),
      );
    },
    async stop() {
      await outbox.stop();
    },
  };
}
