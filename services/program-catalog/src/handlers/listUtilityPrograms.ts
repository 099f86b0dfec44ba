import { CatalogOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import { toUtilityProgram } from '../domain/utilityProgram.ts';
import type { CatalogContext } from '../context.ts';
import { utilityOf } from '@efs/access';

/** `GET {utility_base_url}/v1/programs`: the utility's own programs. */
export const listUtilityPrograms = ({ programs }: Pick<CatalogContext, 'programs'>) =>
  implement(CatalogOperations.listUtilityPrograms, async ({ query, principal }) => {
    const own = await programs.list({ utilityId: utilityOf(principal), skip: query.skip, limit: query.limit });
    return own.map(toUtilityProgram);
  });
