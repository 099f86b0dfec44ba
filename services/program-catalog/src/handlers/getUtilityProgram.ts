import { CatalogOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { toUtilityProgram } from '../domain/utilityProgram.ts';
import type { ProgramReads } from '../store/programReadModel.ts';
import { utilityOf } from '@efs/access';

/** `GET {utility_base_url}/v1/programs/{id}`: another utility's program is 404. */
export const getUtilityProgram = (store: ProgramReads) =>
  implement(CatalogOperations.getUtilityProgram, async ({ params, principal }) => {
    const program = await store.get(params.id);
    if (!program || program.utility_id !== utilityOf(principal)) throw Errors.NOT_FOUND(`Program ${params.id} not found`);
    return toUtilityProgram(program);
  });
