import { CatalogOperations } from '@efs/api';
import { Audience, defineRoutes } from './route.ts';

/** The catalog as an end user sees it for a site (site token), and as a utility manages it (API key, utility listener). */
export const catalogRoutes = defineRoutes([
  {
    method: 'GET',
    url: '/v1/site/:siteId/programs',
    ...Audience.endUser,
    operation: CatalogOperations.listSitePrograms,
    summary: "Lists the programs available to the site, by zip code and device type (default: the site's), with earnings",
    tags: ['Programs'],
  },
  {
    method: 'GET',
    url: '/v1/site/:siteId/program/:programId',
    ...Audience.endUser,
    operation: CatalogOperations.getSiteProgram,
    summary: "Reads one program, with earnings for the site's devices",
    tags: ['Programs'],
  },
  {
    method: 'GET',
    url: '/v1/programs',
    ...Audience.utility,
    operation: CatalogOperations.listUtilityPrograms,
    summary: "Lists the utility's own programs",
    tags: ['Programs'],
  },
  {
    method: 'POST',
    url: '/v1/programs',
    ...Audience.utility,
    operation: CatalogOperations.createUtilityProgram,
    summary: 'Creates a program',
    tags: ['Programs'],
  },
  {
    method: 'GET',
    url: '/v1/programs/:id',
    ...Audience.utility,
    operation: CatalogOperations.getUtilityProgram,
    summary: "Reads one of the utility's programs",
    tags: ['Programs'],
  },
  {
    method: 'PATCH',
    url: '/v1/programs/:id',
    ...Audience.utility,
    operation: CatalogOperations.updateUtilityProgram,
    summary: 'Updates a program; a change of the terms text issues a new terms version',
    tags: ['Programs'],
  },
]);
