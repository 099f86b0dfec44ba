import { CatalogOperations } from '@efs/api';
import { defineRoutes } from './route.ts';

export const programRoutes = defineRoutes([
  {
    method: 'GET',
    url: '/v1/programs',
    listener: 'public',
    auth: { accepts: ['client'] },
    operation: CatalogOperations.listPrograms,
    summary: 'Lists the programs of the catalog',
    tags: ['Programs'],
  },
]);
