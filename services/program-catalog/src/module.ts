import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { announceCatalogState } from './announceState.ts';
import { parseCatalogConfig, type CatalogConfig } from './config.ts';
import { CATALOG_SCHEMA } from './context.ts';
import { createCatalogService } from './service.ts';

export const programCatalog: ServiceModule<CatalogConfig> = {
  name: 'program-catalog',
  schema: CATALOG_SCHEMA,
  migrations,
  config: parseCatalogConfig,
  announceState: announceCatalogState,
  create: createCatalogService,
};
