import { CatalogOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { toUtilityProgram } from '../domain/utilityProgram.ts';
import type { CatalogContext } from '../context.ts';
import { utilityOf } from '@efs/access';

/** `GET {utility_base_url}/v1/programs/{id}`: another utility's program is 404. */
export const getUtilityProgram = ({ programs }: Pick<CatalogContext, 'programs'>) =>
  implement(CatalogOperations.getUtilityProgram, async ({ params, principal }) => {
    const program = await programs.get(params.id);
    if (!program || program.utility_id !== utilityOf(principal)) throw Errors.NOT_FOUND(`Program ${params.id} not found`);
    return toUtilityProgram(program);
  });
