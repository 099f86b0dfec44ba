import { CatalogOperations } from '@efs/api';
import { Audience, defineRoutes } from './route.ts';

export const programRoutes = defineRoutes([
  {
    method: 'GET',
    url: '/v1/programs',
    ...Audience.integrator,
    operation: CatalogOperations.listPrograms,
    summary: 'Lists the programs of the catalog',
    tags: ['Programs'],
  },
]);
