import type { Knex, Outbox } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { ProgramReads } from './store/programReadModel.ts';
import type { ProgramStore } from './store/programStore.ts';
import type { ProgramWrites } from './store/programWrites.ts';
import type { SiteDirectory } from './store/siteDirectory.ts';

/** The Postgres schema of the program catalog's tables. */
export const CATALOG_SCHEMA = 'catalog';

/**
 * What the program catalog's parts are built from (in service.ts); each handler takes the few of
 * them it uses (`Pick<CatalogContext, ...>`).
 */
export interface CatalogContext {
  knex: Knex;
  /** The programs as stored (writes, and reads inside a write's transaction). */
  store: ProgramStore;
  /** The programs as answered: from memory, kept from the store and the programs topic. */
  programs: ProgramReads;
  outbox: Outbox;
  writes: ProgramWrites;
  sites: SiteDirectory;
  clock: Clock;
  logger: Logger;
}
