import { z } from 'zod';
import { ErrorBodySchema, Program, ProgramListQuery } from '@efs/api';
import { defineRoutes } from './route.ts';

export const programRoutes = defineRoutes([
  {
    method: 'GET',
    url: '/v1/programs',
    listener: 'public',
    auth: { accepts: ['client'] },
    target: 'catalog',
    op: 'programs.list',
    summary: 'Lists the programs of the catalog',
    tags: ['Programs'],
    schema: { querystring: ProgramListQuery, response: { 200: z.array(Program), 401: ErrorBodySchema, 403: ErrorBodySchema } },
  },
]);
