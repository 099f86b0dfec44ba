import { z } from 'zod';
import { defineOperations } from '@efs/contracts';
import {
  EligibleProgramsRequest,
  Program,
  ProgramListQuery,
  SiteProgramParams,
  SiteProgramsQuery,
  UtilityProgram,
  UtilityProgramCreate,
  UtilityProgramListQuery,
  UtilityProgramParams,
  UtilityProgramUpdate,
} from '../programs.ts';
import { SiteParams } from '../sites.ts';

/** What the program catalog answers on efs.catalog.requests; each handler is `handlers/<name>.ts`. */
export const CatalogOperations = defineOperations('catalog', {
  listPrograms: { query: ProgramListQuery, response: z.array(Program), errors: [] },
  /** Internal (commissioning): the programs a zip code and devices are eligible for. */
  eligiblePrograms: { body: EligibleProgramsRequest, response: z.array(Program), errors: ['FORBIDDEN'] },
  listSitePrograms: { params: SiteParams, query: SiteProgramsQuery, response: z.array(Program), errors: ['FORBIDDEN', 'NOT_FOUND', 'SITE_INFO_INCOMPLETE', 'SERVICE_UNAVAILABLE'] },
  getSiteProgram: { params: SiteProgramParams, response: Program, errors: ['FORBIDDEN', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'] },
  listUtilityPrograms: { query: UtilityProgramListQuery, response: z.array(UtilityProgram), errors: ['FORBIDDEN'] },
  getUtilityProgram: { params: UtilityProgramParams, response: UtilityProgram, errors: ['FORBIDDEN', 'NOT_FOUND'] },
  createUtilityProgram: { body: UtilityProgramCreate, response: UtilityProgram, errors: ['FORBIDDEN'] },
  updateUtilityProgram: { params: UtilityProgramParams, body: UtilityProgramUpdate, response: UtilityProgram, errors: ['FORBIDDEN', 'NOT_FOUND'] },
});
