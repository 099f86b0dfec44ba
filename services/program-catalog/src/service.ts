import { ProgramsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { operationRouter } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import type { CatalogConfig } from './config.ts';
import { sandboxPrograms } from './domain/sandbox.ts';
import { listPrograms } from './handlers/listPrograms.ts';
import { toProgramMessage } from './programMessage.ts';
import { KnexProgramStore } from './store/programStore.ts';

export const CATALOG_SCHEMA = 'catalog';

/** Composition root of the program catalog: store, outbox, request handlers, sandbox seed. */
export async function createCatalogService(deps: ServiceDeps<CatalogConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'program-catalog' });
  const knex = deps.db.knex;
  const store = new KnexProgramStore(knex, CATALOG_SCHEMA);
  const outbox = new Outbox({ knex, schema: CATALOG_SCHEMA, publisher: deps.transport, logger, topics: [ProgramsTopic] });

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
      await deps.transport.serve('catalog', operationRouter({ 'programs.list': listPrograms(store) }, logger));
    },
    async stop() {
      await outbox.stop();
    },
  };
}
