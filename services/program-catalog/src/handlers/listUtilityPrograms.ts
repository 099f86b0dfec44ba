import { CatalogOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { toUtilityProgram } from '../domain/utilityProgram.ts';
import type { ProgramReads } from '../store/programReadModel.ts';
import { utilityOf } from '@efs/access';

/** `GET {utility_base_url}/v1/programs`: the utility's own programs. */
export const listUtilityPrograms = (store: ProgramReads) =>
  implement(CatalogOperations.listUtilityPrograms, async ({ query, principal }) => {
    const programs = await store.list({ utilityId: utilityOf(principal), skip: query.skip, limit: query.limit });
    return programs.map(toUtilityProgram);
  });
